package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/pipeline"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/storeurl"
	"github.com/gozarr/gozarr/zarr"
)

// defaultCopyBudget is cp's memory budget unless --budget says otherwise.
const defaultCopyBudget = 512 << 20

// copyPlan is what cp changes while copying: empty fields keep the
// source's.
type copyPlan struct {
	chunks, shards []int                 // new chunk (inner chunk) and shard shapes
	compressors    []codecs.BytesToBytes // --codec; reencode says whether given
	reencode       bool
	dtype          *dtype.DataType
	budget         int64
	resume         bool
	overwrite      bool
	validate       bool
	dst            *destination // where the copy goes (dest.go)
}

// copyReport is what cp prints at the end (--json).
type copyReport struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
	Arrays      int    `json:"arrays"`
	Groups      int    `json:"groups"`
	Units       int64  `json:"write_units"`         // write units (chunks or shards) of the destination
	Skipped     int64  `json:"write_units_resumed"` // found complete and verified, not written again
	Bytes       int64  `json:"bytes"`               // decoded bytes copied
	Validated   bool   `json:"validated"`
	TempRemoved int    `json:"temporary_files_removed,omitempty"` // left by the killed copy --resume completed
	Snapshot    string `json:"snapshot,omitempty"`                // the commit of a copy into an Icechunk repository
}

// cmdCp copies an array or a group hierarchy from one URL to another,
// optionally re-encoded: new chunk and shard shapes, codecs, data type;
// always written as Zarr v3.
func cmdCp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	flags, pos, err := splitArgs(args, map[string]bool{"chunks": true, "shards": true, "codec": true, "dtype": true,
		"budget": true, "resume": false, "overwrite": false, "validate": false, "json": false, "q": false, "max-chunk-bytes": true, "m": true})
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return fmt.Errorf("%w: cp takes SOURCE and DESTINATION", errUsage)
	}
	var p copyPlan
	if p.chunks, err = shapeFlag(flags, "chunks"); err != nil {
		return err
	}
	if p.shards, err = shapeFlag(flags, "shards"); err != nil {
		return err
	}
	if v, ok := flags["codec"]; ok {
		if p.compressors, err = parseCodecs(v); err != nil {
			return fmt.Errorf("%w: --codec: %v", errUsage, err)
		}
		p.reencode = true
	}
	if v, ok := flags["dtype"]; ok {
		dt, err := dtype.Parse(v)
		if err != nil {
			return fmt.Errorf("%w: --dtype: %v", errUsage, err)
		}
		p.dtype = &dt
	}
	p.budget = defaultCopyBudget
	if _, ok := flags["budget"]; ok {
		if p.budget, err = budgetFlag(flags); err != nil {
			return err
		}
	} else {
		budgetFlag(map[string]string{"budget": strconv.FormatInt(p.budget, 10)})
	}
	_, p.resume = flags["resume"]
	_, p.overwrite = flags["overwrite"]
	_, p.validate = flags["validate"]
	if p.resume && p.overwrite {
		return fmt.Errorf("%w: --resume keeps what a killed copy wrote, --overwrite deletes it: give one", errUsage)
	}
	ctx, repo, err := repoDestination(ctx, pos[1], flags) // icechunk.go
	if err != nil {
		return err
	}
	src, srcPath, err := openTarget(ctx, pos[0])
	if err != nil {
		return err
	}
	n, err := newWalker(src, false, true).warnTo(stderr, pos[0], srcPath).open(ctx, srcPath, -1)
	if err == nil && n == nil {
		err = zarr.ErrNodeNotFound
	}
	if err != nil {
		return targetErr(ctx, src, pos[0], srcPath, err)
	}
	// Everything that can be checked is checked before the first byte is
	// written: the destination, every array's new metadata and codecs.
	var dst store.Store
	if repo != nil {
		p.dst, dst = repo.dest, repo.session
	} else if p.dst, err = resolveDestination(pos[0], pos[1], p.overwrite); err != nil {
		return err
	}
	if err := checkCopy(ctx, src, n, srcPath, p, pos[0]); err != nil {
		return err
	}
	if dst == nil {
		if dst, err = openDestination(ctx, p.dst.store); err != nil {
			return err
		}
	}
	if !p.dst.local {
		prefix := ""
		if p.dst.node != "" {
			prefix = p.dst.node + "/"
		}
		for _, err := range dst.List(ctx, prefix) {
			if err != nil {
				return err
			}
			p.dst.existed = true
			break
		}
	}
	r := &copyReport{Source: pos[0], Destination: p.dst.shown}
	prog := newProgress(stderr, flags, "cp")
	prog.setTotal(totalBytes(n))
	start := time.Now()
	err = readErr(pos[0], srcPath, copyNode(ctx, src, dst, n, srcPath, p, r, prog))
	prog.finish(err)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w (what was copied stays: cp --resume with the same options completes it)", err)
		}
		if cerr := p.dst.cleanup(ctx, dst); cerr != nil {
			return fmt.Errorf("%w; removing the partial copy %s: %v", err, p.dst.shown, cerr)
		}
		if !p.dst.existed {
			return fmt.Errorf("%w (nothing was left at %s)", err, p.dst.shown)
		}
		return err
	}
	if c, ok := dst.(interface {
		CleanTemp(context.Context, time.Duration) (int, error)
	}); ok && p.resume {
		// The temporary files of the killed run this one completed: older
		// than this run, whose own are all renamed into place by now.
		if r.TempRemoved, err = c.CleanTemp(ctx, time.Since(start)); err != nil {
			return fmt.Errorf("removing the temporary files the killed copy left: %w", err)
		}
	}
	if err := updateConsolidated(ctx, dst, p.dst, stderr); err != nil {
		return err
	}
	if p.validate {
		if err := validateCopy(ctx, src, dst, n, srcPath, p); err != nil {
			return err
		}
		r.Validated = true
	}
	if c, ok := dst.(interface{ Close(context.Context) error }); ok {
		// A new .ozx or .zip destination is written when its store closes.
		if err := c.Close(ctx); err != nil {
			return err
		}
	}
	if p.dst.replace != "" { // --overwrite of an archive
		if err := os.Rename(p.dst.store, p.dst.replace); err != nil {
			os.Remove(p.dst.store)
			return fmt.Errorf("replacing %s: %w", p.dst.replace, err)
		}
	}
	if repo != nil {
		id, err := repo.commit(ctx, pos[0])
		if err != nil {
			return err
		}
		r.Snapshot = id.String()
	}
	if _, ok := flags["json"]; ok {
		return writeJSON(stdout, r)
	}
	fmt.Fprintf(stdout, "copied %s and %s to %s: %s (%d found complete), %s decoded", plural(r.Arrays, "array"), plural(r.Groups, "group"), r.Destination, plural(int(r.Units), "write unit"), r.Skipped, humanBytes(r.Bytes))
	if r.Validated {
		fmt.Fprint(stdout, ", validated")
	}
	if r.TempRemoved > 0 {
		fmt.Fprintf(stdout, ", %s of the killed copy removed", plural(r.TempRemoved, "temporary file"))
	}
	if r.Snapshot != "" {
		fmt.Fprintf(stdout, ", committed as snapshot %s on branch %s", r.Snapshot, repo.branch)
	}
	fmt.Fprintln(stdout)
	return nil
}

// totalBytes adds up the decoded sizes of a hierarchy's arrays.
func totalBytes(n *nodeInfo) int64 {
	t := int64(0)
	if n.NodeType == "array" {
		dt, _ := dtype.Parse(n.DataType)
		t = int64(count(n.Shape)) * int64(dt.Size())
	}
	for _, c := range n.Children {
		t += totalBytes(c)
	}
	return t
}

// openDestination opens a writable store at a URL or directory (created
// when missing).
func openDestination(ctx context.Context, target string) (store.Store, error) {
	var opts []storeurl.Option
	if !strings.Contains(target, "://") || strings.HasPrefix(target, "file://") {
		opts = append(opts, storeurl.CreateDir())
	}
	r, err := storeurl.Open(ctx, target, opts...)
	if err != nil {
		return nil, err
	}
	st, ok := r.(store.Store)
	if !ok {
		return nil, fmt.Errorf("destination %s: %w (the store cannot be written)", target, store.ErrReadOnly)
	}
	return st, nil
}

// shapeFlag parses a shape flag: "1024,1024" (or "1024x1024").
func shapeFlag(flags map[string]string, name string) ([]int, error) {
	v, ok := flags[name]
	if !ok {
		return nil, nil
	}
	parts := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == 'x' || r == ' ' })
	out := make([]int, len(parts))
	for i, s := range parts {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%w: --%s must be positive integers separated by commas, not %q", errUsage, name, v)
		}
		out[i] = n
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: --%s is empty", errUsage, name)
	}
	return out, nil
}

// parseCodecs parses --codec: "none"; a comma-separated chain of short
// spellings (zstd, zstd:LEVEL, gzip:LEVEL, blosc:CNAME:SHUFFLE:CLEVEL,
// crc32c); or JSON, one codec object or a list of them.
func parseCodecs(v string) ([]codecs.BytesToBytes, error) {
	var specs []codecs.Spec
	switch t := strings.TrimSpace(v); {
	case t == "none":
		return nil, nil
	case strings.HasPrefix(t, "{"):
		var s codecs.Spec
		if err := json.Unmarshal([]byte(t), &s); err != nil {
			return nil, err
		}
		specs = []codecs.Spec{s}
	case strings.HasPrefix(t, "["):
		if err := json.Unmarshal([]byte(t), &specs); err != nil {
			return nil, err
		}
	default:
		for _, part := range strings.Split(t, ",") {
			s, err := shortSpec(part)
			if err != nil {
				return nil, err
			}
			specs = append(specs, s)
		}
	}
	out := make([]codecs.BytesToBytes, 0, len(specs))
	for _, s := range specs {
		c, err := codecs.New(s)
		if err != nil {
			return nil, err
		}
		bb, ok := c.(codecs.BytesToBytes)
		if !ok {
			return nil, fmt.Errorf("codec %s is not a bytes-to-bytes codec (a compressor or checksum)", s.Name)
		}
		out = append(out, bb)
	}
	return out, nil
}

// shortSpec turns one short spelling into a codec spec.
func shortSpec(s string) (codecs.Spec, error) {
	f := strings.Split(strings.TrimSpace(s), ":")
	num := func(i, def int) (int, error) {
		if len(f) <= i || f[i] == "" {
			return def, nil
		}
		n, err := strconv.Atoi(f[i])
		if err != nil {
			return 0, fmt.Errorf("%q: %q is not a level", s, f[i])
		}
		return n, nil
	}
	cfg := map[string]any{}
	var err error
	var level int
	switch f[0] {
	case "zstd":
		level, err = num(1, 3)
		cfg["level"], cfg["checksum"] = level, false
	case "gzip":
		level, err = num(1, 5)
		cfg["level"] = level
	case "blosc":
		cname, shuffle := "lz4", "shuffle"
		if len(f) > 1 && f[1] != "" {
			cname = f[1]
		}
		if len(f) > 2 && f[2] != "" {
			shuffle = f[2]
		}
		level, err = num(3, 5)
		cfg["cname"], cfg["shuffle"], cfg["clevel"], cfg["blocksize"] = cname, shuffle, level, 0
	case "crc32c":
		if len(f) > 1 {
			return codecs.Spec{}, fmt.Errorf("%q: crc32c takes no parameters", s)
		}
		return codecs.Spec{Name: "crc32c"}, nil
	default:
		return codecs.Spec{}, fmt.Errorf("%q: unknown codec spelling (zstd:LEVEL, gzip:LEVEL, blosc:CNAME:SHUFFLE:CLEVEL, crc32c, none, or JSON)", s)
	}
	if err != nil {
		return codecs.Spec{}, err
	}
	b, _ := json.Marshal(cfg)
	return codecs.Spec{Name: f[0], Configuration: b}, nil
}

// destPath returns the destination node path of the source node at
// srcNode (below the copied root at root).
func (p copyPlan) destPath(srcNode, root string) (rel, full string) {
	rel = strings.TrimPrefix(strings.TrimPrefix(srcNode, root), "/")
	full = rel
	if p.dst != nil && p.dst.node != "" {
		full = strings.TrimSuffix(p.dst.node+"/"+rel, "/")
	}
	return rel, full
}

// dstName shows the destination of a node to the user.
func (p copyPlan) dstName(rel string) string {
	if p.dst == nil {
		return "/" + rel
	}
	return p.dst.nodeName(rel)
}

// srcName shows a source node to the user.
func srcName(r *copyReport, rel string) string {
	if rel == "" {
		return r.Source
	}
	return strings.TrimRight(r.Source, "/") + "/" + rel
}

// checkCopy checks, before anything is written, what can fail in a copy
// of n: each array's new metadata (chunk and shard shapes, dtype, fill
// value) and the encode settings of its codecs (compression levels).
func checkCopy(ctx context.Context, src store.Reader, n *nodeInfo, root string, p copyPlan, shown string) error {
	for _, c := range n.Children {
		if err := checkCopy(ctx, src, c, root, p, shown); err != nil {
			return err
		}
	}
	if n.NodeType != "array" {
		return nil
	}
	rel, _ := p.destPath(n.Path, root)
	a, err := zarr.OpenArray(ctx, src, n.Path, withLimits(ctx, zarr.WithMaxChunkBytes(p.budget))...)
	if err != nil {
		return err
	}
	meta, err := destMetadata(a, p)
	if errors.Is(err, errUsage) { // "usage:" said once, at the start, not mid-sentence
		return &targetError{msg: "usage: copy of " + p.dstName(rel) + ": " + strings.TrimPrefix(err.Error(), "usage: "), err: err}
	}
	flagErr := func(msg string, err error) error {
		if (p.reencode || p.chunks != nil || p.shards != nil) && errors.Is(err, codecs.ErrInvalidConfig) {
			// A --codec level or a --chunks/--shards shape that cannot be:
			// a usage mistake (exit status 2), as --chunks 0,8 is.
			return &usageError{msg: msg, err: err}
		}
		return &targetError{msg: msg, err: err} // the sentinels stay wrapped
	}
	if err != nil {
		return flagErr("copy of "+p.dstName(rel)+": "+err.Error(), err)
	}
	if _, err := zarr.CreateArray(ctx, mem.New(), "", meta); err != nil {
		// A dry run: the node path of the scratch store means nothing here.
		return flagErr("copy of "+p.dstName(rel)+": "+strings.TrimPrefix(err.Error(), `create "": `), err)
	}
	return checkValuesFit(ctx, a, meta.DataType, p.budget, srcName(&copyReport{Source: shown}, rel))
}

// usageError is an error of the library that a flag's value caused: it
// wraps the library's error and errUsage, and says the library's text.
type usageError struct {
	msg string
	err error
}

func (e *usageError) Error() string   { return e.msg }
func (e *usageError) Unwrap() []error { return []error{e.err, errUsage} }

// checkValuesFit reads a's values, before anything is written, when the
// --dtype cast to dt may fail for some of them (a narrower or other kind
// of type), and fails at the first that dt cannot hold, naming its array
// coordinates; casts that hold every value of a's type read nothing.
func checkValuesFit(ctx context.Context, a *zarr.Array, dt dtype.DataType, budget int64, name string) error {
	from := a.Metadata().DataType
	if !castMayFail(from, dt) {
		return nil
	}
	sel, err := a.Selection()
	if err != nil {
		return err
	}
	return stream(ctx, a, sel, blockBytes(budget), func(b streamBlock) error {
		if _, err := castValues(from, dt, b.Data); err != nil {
			return fmt.Errorf("--dtype %s: %s%s: %w (nothing was written)", dt, name, castCoords(err, b.Sel), err)
		}
		return nil
	})
}

// castMayFail tells whether some value of type from does not fit type to
// (dtype.Number.Put fails): any cast but to a type whose range holds
// from's. Rounding to a narrower float's precision is not a failure.
func castMayFail(from, to dtype.DataType) bool {
	if from == to {
		return false
	}
	// lo, hi: the range of values of a type; whole: integers only.
	rng := func(dt dtype.DataType) (lo, hi float64, whole bool) {
		bits := 8 * dt.Size()
		switch dt.Kind() {
		case dtype.Bool:
			return 0, 1, true
		case dtype.Int:
			return -math.Ldexp(1, bits-1), math.Ldexp(1, bits-1) - 1, true
		case dtype.Uint:
			return 0, math.Ldexp(1, bits) - 1, true
		case dtype.Float:
			switch dt.Size() {
			case 2:
				return -65504, 65504, false
			case 4:
				return -math.MaxFloat32, math.MaxFloat32, false
			}
			return math.Inf(-1), math.Inf(1), false
		}
		return 0, 0, false
	}
	flo, fhi, fwhole := rng(from)
	tlo, thi, twhole := rng(to)
	if twhole && !fwhole {
		return true // a float into an integer type: fractions, NaN
	}
	return flo < tlo || fhi > thi
}

// copyNode copies the node n (at srcPath + n.Path in src) and what is
// below it to the same place under dst.
func copyNode(ctx context.Context, src store.Reader, dst store.Store, n *nodeInfo, root string, p copyPlan, r *copyReport, prog *progress) error {
	rel, full := p.destPath(n.Path, root)
	if n.NodeType == "group" {
		if err := createGroup(ctx, dst, full, n.Attributes, p); err != nil {
			return fmt.Errorf("destination group %s: %w", p.dstName(rel), err)
		}
		r.Groups++
		for _, c := range n.Children {
			if err := copyNode(ctx, src, dst, c, root, p, r, prog); err != nil {
				return err
			}
		}
		return nil
	}
	r.Arrays++
	return copyArray(ctx, src, dst, n.Path, rel, p, r, prog)
}

// createGroup writes a copied group: a group already there is kept with
// --resume, replaced (with all below it) with --overwrite.
func createGroup(ctx context.Context, dst store.Store, full string, attrs map[string]any, p copyPlan) error {
	var opts []zarr.Option
	if p.overwrite && full == p.dst.node {
		opts = append(opts, zarr.Overwrite())
	}
	if p.resume {
		if _, err := zarr.OpenGroup(ctx, dst, full, zarr.WithoutConsolidated()); err == nil {
			return nil
		}
	}
	_, err := zarr.CreateGroup(ctx, dst, full, attrs, opts...)
	if errors.Is(err, zarr.ErrNodeExists) {
		if t, terr := zarr.NodeTypeAt(ctx, dst, full); terr == nil && t == zarr.NodeArray {
			return &targetError{msg: "an array is there, not a group: give --overwrite to replace it", err: err}
		}
		return fmt.Errorf("exists: give --resume to complete an interrupted copy, --overwrite to replace it, or remove it")
	}
	return err
}

// destMetadata returns the metadata of an array's copy.
func destMetadata(a *zarr.Array, p copyPlan) (*zarr.ArrayMetadata, error) {
	m := a.Metadata()
	dt := m.DataType
	if p.dtype != nil {
		dt = *p.dtype
	}
	if p.chunks == nil && p.shards == nil && !p.reencode && p.dtype == nil {
		// A plain copy: the source's own codecs, as v3.
		c := *m
		c.Attributes = a.Attributes()
		return &c, nil
	}
	fill, err := castValues(m.DataType, dt, m.FillValue)
	if err != nil {
		return nil, fmt.Errorf("fill value: %w", err)
	}
	inner := p.chunks
	if inner == nil {
		inner = readUnits(a)
	}
	unit := inner
	opts := []zarr.MetadataOption{zarr.Fill(fill), zarr.Attributes(a.Attributes())}
	if p.shards != nil {
		unit = p.shards
		opts = append(opts, zarr.Shards(p.shards...))
	}
	comp := p.compressors
	if !p.reencode {
		// Keep the source's compressors (those after its bytes codec).
		if comp, err = sourceCompressors(a); err != nil {
			return nil, err
		}
	}
	if len(comp) > 0 {
		opts = append(opts, zarr.Compress(comp...))
	}
	flag := "--chunks"
	if p.shards != nil {
		flag = "--shards"
	}
	if len(unit) != len(m.Shape) || len(inner) != len(m.Shape) {
		if len(inner) != len(m.Shape) {
			flag = "--chunks"
		}
		return nil, fmt.Errorf("%w: %s gives %s for an array of %s", errUsage, flag, plural(len(unit), "dimension"), plural(len(m.Shape), "dimension"))
	}
	meta, err := zarr.NewArrayMetadata(m.Shape, dt, inner, opts...)
	if err != nil && p.shards != nil && p.chunks == nil {
		// The inner chunks came from the source: say where, and the flag.
		err = fmt.Errorf("%w (the inner chunks %v are the source's: give --chunks for others)", err, inner)
	}
	return meta, err
}

// sourceCompressors returns the bytes-to-bytes codecs of a's chunks (its
// inner chunks when sharded).
func sourceCompressors(a *zarr.Array) ([]codecs.BytesToBytes, error) {
	specs := a.Metadata().Codecs
	if l := a.Sharding(); l != nil {
		specs = l.Codec().InnerSpecs()
	}
	var out []codecs.BytesToBytes
	after := false
	for _, s := range specs {
		if s.Name == "bytes" || s.Name == "vlen-utf8" || s.Name == "vlen-bytes" {
			after = true
			continue
		}
		if !after {
			continue
		}
		c, err := codecs.New(s)
		if err != nil {
			return nil, err
		}
		if bb, ok := c.(codecs.BytesToBytes); ok {
			out = append(out, bb)
		}
	}
	return out, nil
}

// copyArray copies one array write unit by write unit of the destination,
// several at once within the budget. With resume, a unit whose key exists
// and reads back equal to the source is left alone.
func copyArray(ctx context.Context, src store.Reader, dst store.Store, srcPath, rel string, p copyPlan, r *copyReport, prog *progress) error {
	_, dstPath := p.destPath(rel, "")
	a, err := zarr.OpenArray(ctx, src, srcPath, withLimits(ctx, zarr.WithMaxChunkBytes(p.budget))...)
	if err != nil {
		return err
	}
	meta, err := destMetadata(a, p)
	if errors.Is(err, errUsage) { // "usage:" said once, at the start, not mid-sentence
		return &targetError{msg: "usage: copy of " + p.dstName(rel) + ": " + strings.TrimPrefix(err.Error(), "usage: "), err: err}
	}
	if err != nil {
		return fmt.Errorf("copy of %s: %w", p.dstName(rel), err)
	}
	unitBytes := int64(count(meta.ChunkShape)) * int64(max(meta.DataType.Size(), a.Metadata().DataType.Size()))
	// Each unit in flight holds its source block, its cast, its encoding
	// and a read's bytes in flight; the rest of the budget is the Go
	// collector's room under the soft limit.
	workers := int(max(1, min(int64(runtime.GOMAXPROCS(0)), p.budget/max(1, 5*unitBytes))))
	pipe := zarr.WithBudget(pipeline.NewBudget(max(p.budget/8, 1))) // shared by the workers' reads and writes
	b, err := openOrCreate(ctx, dst, dstPath, meta, p, pipe)
	if err != nil {
		return fmt.Errorf("destination array %s: %w", p.dstName(rel), err)
	}
	a, err = zarr.OpenArray(ctx, src, srcPath, withLimits(ctx, zarr.WithMaxChunkBytes(p.budget), pipe)...)
	if err != nil {
		return err
	}
	plan, err := b.NewWritePlan(nil) // every unit whole: one task each
	if err != nil {
		return err
	}
	units := make(chan zarr.WriteTask)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(units)
		for u := range plan.All() {
			select {
			case units <- u:
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		return nil
	})
	var done, skipped, nbytes atomic.Int64
	srcDT, dstDT := a.Metadata().DataType, meta.DataType
	for range workers {
		g.Go(func() error {
			var buf, back []byte
			for u := range units {
				sel := taskSelection(u)
				n := sel.NumElements()
				if srcDT.VarLen() { // strings.go
					skip, err := copyVarUnit(gctx, dst, a, b, u.Key(), sel, p.resume)
					if err != nil {
						return err
					}
					if skip {
						skipped.Add(1)
					}
					done.Add(1)
					nbytes.Add(int64(n * srcDT.Size()))
					prog.add(int64(n * srcDT.Size()))
					continue
				}
				buf = slices.Grow(buf[:0], n*srcDT.Size())[:n*srcDT.Size()]
				if err := a.ReadSelection(gctx, buf, sel); err != nil {
					return err
				}
				data, err := castValues(srcDT, dstDT, buf)
				if err != nil {
					return fmt.Errorf("--dtype %s: %s%s: %w", dstDT, srcName(r, rel), castCoords(err, sel), err)
				}
				if p.resume {
					ok, err := unitComplete(gctx, dst, b, u.Key(), sel, data, &back)
					if err != nil {
						return err
					}
					if ok {
						skipped.Add(1)
						done.Add(1)
						nbytes.Add(int64(len(buf)))
						prog.add(int64(len(buf)))
						continue
					}
				}
				if err := u.Run(gctx, data); err != nil {
					return err
				}
				done.Add(1)
				nbytes.Add(int64(len(buf)))
				prog.add(int64(len(buf)))
			}
			return nil
		})
	}
	err = g.Wait()
	r.Units += done.Load()
	r.Skipped += skipped.Load()
	r.Bytes += nbytes.Load()
	return err
}

// openOrCreate creates the destination array, or with resume opens the
// one there, which must have the metadata the copy would write; with
// overwrite, a node there is replaced.
func openOrCreate(ctx context.Context, dst store.Store, path string, meta *zarr.ArrayMetadata, p copyPlan, opts ...zarr.Option) (*zarr.Array, error) {
	b, err := zarr.OpenArray(ctx, dst, path, opts...)
	switch {
	case errors.Is(err, zarr.ErrNodeNotFound):
		return zarr.CreateArray(ctx, dst, path, meta, opts...)
	case p.overwrite:
		return zarr.CreateArray(ctx, dst, path, meta, append(opts, zarr.Overwrite())...)
	case errors.Is(err, zarr.ErrNodeType):
		// Not `open "": wrong zarr node type`: what is there, and what to do.
		return nil, &targetError{msg: "a group is there, not an array: give --overwrite to replace it (all of it), or a new name inside it (GROUP/NAME) to copy into it", err: err}
	case err != nil:
		return nil, err
	case !p.resume:
		return nil, fmt.Errorf("exists: give --resume to complete an interrupted copy, --overwrite to replace it, or remove it")
	}
	want, err := meta.Marshal()
	if err != nil {
		return nil, err
	}
	have, err := b.Metadata().Marshal()
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(want, have) {
		return nil, fmt.Errorf("exists with other metadata than this copy writes, so it cannot be resumed: give --overwrite to replace it, or the options that made it")
	}
	return b, nil
}

// unitComplete reports whether the write unit at key is stored and reads
// back as want.
func unitComplete(ctx context.Context, st store.Reader, b *zarr.Array, key string, sel nd.Selection, want []byte, back *[]byte) (bool, error) {
	if _, err := valueSize(ctx, st, key); errors.Is(err, store.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	*back = slices.Grow((*back)[:0], len(want))[:len(want)]
	if err := b.ReadSelection(ctx, *back, sel); err != nil {
		return false, nil // unreadable: written again
	}
	return bytes.Equal(*back, want), nil
}

// taskSelection returns the box of write task t (its part inside the
// array), whatever the chunk grid.
func taskSelection(t zarr.WriteTask) nd.Selection {
	sel := make(nd.Selection, len(t.Start))
	for d := range sel {
		sel[d] = nd.Dim{Start: t.Start[d], Count: t.Shape[d], Step: 1}
	}
	return sel
}

// plural says "1 array", "2 arrays".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// updateConsolidated rewrites the consolidated metadata of the groups
// above (and at) the copy's node that have it, so a new node does not
// stay hidden from readers that trust it (the outermost such group is
// consolidated again, which covers the ones inside it).
func updateConsolidated(ctx context.Context, dst store.Store, d *destination, stderr io.Writer) error {
	node := d.node
	parts := []string{""}
	if node != "" {
		for i, seg := range strings.Split(node, "/") {
			parts = append(parts, strings.TrimPrefix(parts[i]+"/"+seg, "/"))
		}
	}
	for _, g := range parts {
		grp, err := zarr.OpenGroup(ctx, dst, g)
		if err != nil {
			continue
		}
		if ok, _ := grp.Consolidated(); !ok {
			continue
		}
		if _, err := zarr.Consolidate(ctx, dst, g); err != nil {
			return fmt.Errorf("updating the consolidated metadata of %s: %w", d.groupShown(g), err)
		}
		fmt.Fprintf(stderr, "zarrcat: updated the consolidated metadata of %s\n", d.groupShown(g))
		return nil
	}
	return nil
}
