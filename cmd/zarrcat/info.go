package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/sharding"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/zarr"
)

// cmdInfo prints an array's or a group's metadata, header only (no chunk
// is read): with --size also what the array holds in its store, with
// --json as one JSON document.
func cmdInfo(ctx context.Context, args []string, w, stderr io.Writer) error {
	flags, pos, err := splitArgs(args, map[string]bool{"json": false, "size": false})
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: info takes one TARGET", errUsage)
	}
	_, size := flags["size"]
	_, asJSON := flags["json"]
	st, nodePath, err := openTarget(ctx, pos[0])
	if err != nil {
		return err
	}
	if asJSON {
		n, err := newWalker(st, size, true).warnTo(stderr, pos[0], nodePath).open(ctx, nodePath, 1)
		if err == nil && n == nil {
			err = fmt.Errorf("%w", zarr.ErrNodeNotFound)
		}
		if err != nil {
			return targetErr(ctx, st, pos[0], nodePath, err)
		}
		return writeJSON(w, n)
	}
	nt, err := zarr.NodeTypeAt(ctx, st, nodePath, withLimits(ctx)...)
	if err != nil {
		return targetErr(ctx, st, pos[0], nodePath, err)
	}
	if nt == zarr.NodeGroup {
		g, err := zarr.OpenGroup(ctx, st, nodePath, withLimits(ctx)...)
		if err != nil {
			return targetErr(ctx, st, pos[0], nodePath, err)
		}
		if err := printGroup(ctx, w, pos[0], g); err != nil {
			return err
		}
		if ok, _ := g.Consolidated(); ok {
			newWalker(st, false, false).warnTo(stderr, pos[0], nodePath).checkStale(ctx, g, nodePath)
		}
		return nil
	}
	// info decodes no chunk: it describes arrays whatever their chunk size
	// (and prints it, the figure get's --max-chunk-bytes is compared with).
	a, err := zarr.OpenArray(ctx, st, nodePath, withLimits(ctx, zarr.WithMaxChunkBytes(math.MaxInt64))...)
	if err != nil {
		return targetErr(ctx, st, pos[0], nodePath, err)
	}
	if err := printArray(w, pos[0], a); err != nil {
		return err
	}
	if a.ZarrFormat() == 2 {
		printZarray(ctx, w, st, nodePath)
	}
	if !size {
		return nil
	}
	s, err := newWalker(st, true, false).storage(ctx, a)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%-20s %s\n", "storage:", storageLine(s))
	return nil
}

// printZarray writes what a v2 array's .zarray says in its own terms
// (dtype, order, compressor, filters), which the codecs line shows in
// their v3 translation: nothing when it cannot be read again.
func printZarray(ctx context.Context, w io.Writer, st store.Reader, nodePath string) {
	key := ".zarray"
	if nodePath != "" {
		key = nodePath + "/.zarray"
	}
	b, err := st.Get(ctx, key, store.Full())
	if err != nil || len(b) > 1<<20 {
		return
	}
	var doc map[string]json.RawMessage
	if json.Unmarshal(b, &doc) != nil {
		return
	}
	var parts []string
	for _, k := range []string{"dtype", "order", "compressor", "filters", "dimension_separator"} {
		if v, ok := doc[k]; ok {
			var c bytes.Buffer
			if json.Compact(&c, v) == nil {
				t := c.String()
				if len(t) > 200 { // hostile metadata is not echoed whole
					t = t[:200] + "..."
				}
				parts = append(parts, k+" "+t)
			}
		}
	}
	fmt.Fprintf(w, "%-20s %s\n", "v2 .zarray:", strings.Join(parts, ", "))
}

// printArray writes an array's description, one "name: value" per line.
func printArray(w io.Writer, target string, a *zarr.Array) error {
	m := a.Metadata()
	line := func(k, format string, v ...any) {
		fmt.Fprintf(w, "%-20s "+format+"\n", append([]any{k + ":"}, v...)...)
	}
	line("target", "%s", target)
	line("node_type", "array (zarr_format %d)", a.ZarrFormat())
	line("shape", "%s", dims(m.Shape))
	line("data_type", "%s", m.DataType)
	fill, _ := dtype.FormatFill(m.DataType, m.FillValue)
	line("fill_value", "%s", fill)
	largest := ""
	if r := m.Rectilinear; r != nil {
		g, _ := json.Marshal(r)
		var obj struct {
			Configuration struct {
				ChunkShapes json.RawMessage `json:"chunk_shapes"`
			} `json:"configuration"`
		}
		_ = json.Unmarshal(g, &obj)
		line("chunk_grid", "rectilinear, chunk edges %s", obj.Configuration.ChunkShapes)
		largest = " (largest)"
	}
	if l := a.Sharding(); l != nil {
		line("shard_shape", "%s%s", dims(m.ChunkShape), largest)
		line("inner_chunk_shape", "%s", dims(l.ChunkShape()))
		line("chunks_per_shard", "%s", dims(l.ChunksPerShard()))
		line("shards", "%d (grid %s)", count(m.GridShape()), dims(m.GridShape()))
		c := l.Codec()
		line("inner_codecs", "%s", specsString(c.InnerSpecs()))
		line("index_codecs", "%s", specsString(c.IndexSpecs()))
		line("index_location", "%s (%d bytes)", c.IndexLocation(), l.IndexSize())
		line("inner_chunk_bytes", "%d bytes decoded", l.Inner().Repr().NumBytes())
	} else {
		line("chunk_shape", "%s%s", dims(m.ChunkShape), largest)
		line("chunks", "%d (grid %s)", count(m.GridShape()), dims(m.GridShape()))
		line("codecs", "%s", specsString(m.Codecs))
		line("chunk_bytes", "%d bytes decoded%s", a.Chain().Repr().NumBytes(), largest)
	}
	enc, _ := json.Marshal(m.ChunkKeyEncoding)
	line("chunk_key_encoding", "%s (first key %q)", enc, a.ChunkKey(make([]int, len(m.Shape))))
	if m.DimensionNames != nil {
		names := make([]string, len(m.DimensionNames))
		for i, n := range m.DimensionNames {
			names[i] = "null"
			if n != nil {
				names[i] = fmt.Sprintf("%q", *n)
			}
		}
		line("dimension_names", "[%s]", strings.Join(names, ", "))
	}
	attrs, err := json.Marshal(a.Attributes())
	if err != nil {
		return err
	}
	line("attributes", "%s", attrs)
	return nil
}

// printGroup writes a group's attributes and children.
func printGroup(ctx context.Context, w io.Writer, target string, g *zarr.Group) error {
	fmt.Fprintf(w, "%-20s %s\n", "target:", target)
	fmt.Fprintf(w, "%-20s group (zarr_format %d)\n", "node_type:", g.ZarrFormat())
	attrs, err := json.Marshal(g.Attributes())
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%-20s %s\n", "attributes:", attrs)
	children, err := g.Children(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%-20s %d\n", "children:", len(children))
	for _, c := range children {
		fmt.Fprintf(w, "  %-6s %s\n", c.Type, c.Name)
	}
	return nil
}

// dims formats a shape as "[3 4 5]", or "[]" for 0-d.
func dims(s []int) string { return strings.ReplaceAll(fmt.Sprint(s), " ", " × ") }

// count returns the product of a grid shape.
func count(s []int) int {
	n := 1
	for _, v := range s {
		n *= v
	}
	return n
}

// specsString formats a codec list as "bytes{"endian":"little"} → zstd{...}".
func specsString(specs []codecs.Spec) string {
	parts := make([]string, len(specs))
	for i, s := range specs {
		parts[i] = s.Name
		if len(s.Configuration) > 0 && s.Name != sharding.Name {
			parts[i] += compactJSON(s.Configuration)
		}
	}
	return strings.Join(parts, " → ")
}

// compactJSON strips insignificant space from a JSON document.
func compactJSON(b []byte) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return string(b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}
