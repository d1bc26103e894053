package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/zarr"
)

// exitDiffer is diff's exit status when the arrays differ (0: the same,
// 1: an error, 2: a usage mistake).
const exitDiffer = 3

// errDiffer marks a diff that found differences: main exits exitDiffer.
var errDiffer = errors.New("arrays differ")

// diffReport is what diff prints.
type diffReport struct {
	A, B string `json:"-"`
	// Metadata lists the differences that make the arrays different:
	// shape, data type, fill value, attributes.
	Metadata []string `json:"metadata"`
	// Layout lists differences of storage only (chunks, codecs, format),
	// which do not change values.
	Layout    []string `json:"layout"`
	Compared  int64    `json:"compared"`               // elements compared
	Differing int64    `json:"differing"`              // elements that differ (NaN equals NaN)
	First     []int    `json:"first,omitempty"`        // coordinates of the first difference
	FirstA    string   `json:"first_a,omitempty"`      // its values
	FirstB    string   `json:"first_b,omitempty"`      //
	MaxAbs    *float64 `json:"max_abs_diff,omitempty"` // largest |a-b| over differing real values
	Same      bool     `json:"same"`
}

// cmdDiff compares two arrays: metadata, then values, NaN-aware.
func cmdDiff(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	flags, pos, err := splitArgs(args, map[string]bool{"json": false, "q": false, "budget": true, "max-chunk-bytes": true})
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return fmt.Errorf("%w: diff takes two arrays or groups, A and B", errUsage)
	}
	budget, err := budgetFlag(flags)
	if err != nil {
		return err
	}
	if done, err := diffGroups(ctx, pos, flags, budget, stdout, stderr); done { // diffgroup.go
		return err
	}
	a, sel, err := openSelection(ctx, pos[:1], flags, budget)
	if err != nil {
		return err
	}
	b, _, err := openSelection(ctx, pos[1:], flags, budget)
	if err != nil {
		return err
	}
	r, err := diffArrays(ctx, a, b, sel, flags, budget, stderr)
	if se := (*sideError)(nil); errors.As(err, &se) { // which of A and B, as typed
		return readErr(pos[se.side], []*zarr.Array{a, b}[se.side].Path(), se.err)
	}
	if err != nil {
		return err
	}
	if _, ok := flags["json"]; ok {
		err = writeJSON(stdout, r)
	} else {
		printDiff(stdout, pos, r)
	}
	if err == nil && !r.Same {
		return errDiffer
	}
	return err
}

// diffArrays compares two arrays over sel (all of a): metadata, then the
// values when they are comparable.
func diffArrays(ctx context.Context, a, b *zarr.Array, sel nd.Selection, flags map[string]string, budget int64, stderr io.Writer) (*diffReport, error) {
	r := compareMetadata(a, b)
	if (len(r.Metadata) == 0 || onlySoft(r.Metadata)) && (a.Metadata().DataType == b.Metadata().DataType || castable(a.Metadata().DataType, b.Metadata().DataType)) {
		prog := newProgress(stderr, flags, "diff")
		prog.setTotal(int64(sel.NumElements()) * int64(a.Metadata().DataType.Size()) * 2)
		err := compareValues(ctx, a, b, sel, budget, r, prog)
		prog.finish(err)
		if err != nil {
			return nil, err
		}
	}
	r.Same = len(r.Metadata) == 0 && r.Differing == 0 // a dtype difference is a difference, even with equal values
	return r, nil
}

// onlySoft reports whether metadata differences leave values comparable
// (same shape and data type).
func onlySoft(diffs []string) bool {
	for _, d := range diffs {
		if strings.HasPrefix(d, "shape") {
			return false
		}
	}
	return true
}

// compareMetadata lists how two arrays' metadata differ.
func compareMetadata(a, b *zarr.Array) *diffReport {
	r := &diffReport{Metadata: []string{}, Layout: []string{}}
	ma, mb := a.Metadata(), b.Metadata()
	add := func(list *[]string, name string, x, y any) {
		if !reflect.DeepEqual(x, y) {
			*list = append(*list, fmt.Sprintf("%s: %v vs %v", name, x, y))
		}
	}
	// Shapes as info and tree write them: [31 × 19].
	add(&r.Metadata, "shape", dims(ma.Shape), dims(mb.Shape))
	add(&r.Metadata, "data_type", ma.DataType.String(), mb.DataType.String())
	fa, _ := dtype.FormatFill(ma.DataType, ma.FillValue)
	fb, _ := dtype.FormatFill(mb.DataType, mb.FillValue)
	add(&r.Metadata, "fill_value", string(fa), string(fb))
	ja, _ := json.Marshal(a.Attributes())
	jb, _ := json.Marshal(b.Attributes())
	add(&r.Metadata, "attributes", string(ja), string(jb))
	add(&r.Layout, "zarr_format", a.ZarrFormat(), b.ZarrFormat())
	// The outer grid is named as info names it: shard_shape when both
	// are sharded.
	grid := "chunk_shape"
	switch sha, shb := a.Sharding() != nil, b.Sharding() != nil; {
	case sha && shb:
		grid = "shard_shape"
	case sha || shb:
		grid = "chunk_shape (shard_shape when sharded)"
	}
	add(&r.Layout, grid, dims(ma.ChunkShape), dims(mb.ChunkShape))
	add(&r.Layout, "codecs", specsString(ma.Codecs), specsString(mb.Codecs))
	// A sharded array's inner chunks and their codecs are layout too.
	inner := func(x *zarr.Array) (shape, codecs string) {
		if l := x.Sharding(); l != nil {
			return dims(l.ChunkShape()), specsString(l.Codec().InnerSpecs())
		}
		return "(not sharded)", "(not sharded)"
	}
	sa, ca := inner(a)
	sb, cb := inner(b)
	if a.Sharding() != nil || b.Sharding() != nil {
		add(&r.Layout, "inner_chunk_shape", sa, sb)
		add(&r.Layout, "inner_codecs", ca, cb)
	}
	return r
}

// castable reports whether values of a and b compare after a cast (both
// booleans, integers or real floats): diff then compares values across a
// data type difference, as after cp --dtype.
func castable(a, b dtype.DataType) bool {
	ok := func(dt dtype.DataType) bool {
		k := dt.Kind()
		return k == dtype.Bool || k == dtype.Int || k == dtype.Uint || k == dtype.Float
	}
	return ok(a) && ok(b)
}

// compareValues compares a and b over sel block by block, filling r.
func compareValues(ctx context.Context, a, b *zarr.Array, sel nd.Selection, budget int64, r *diffReport, prog *progress) error {
	dt := a.Metadata().DataType
	if dt.VarLen() { // strings.go
		return compareVarValues(ctx, a, b, sel, budget, r, prog)
	}
	n := dt.Size()
	dtB := b.Metadata().DataType
	return streamAll(ctx, []*zarr.Array{a, b}, sel, budget/8, func(blk streamBlock) error {
		x, y := blk.Data, blk.More[0]
		if dtB != dt { // compared as B's type: a value B cannot hold differs
			cast := make([]byte, len(y))
			nb := dtB.Size()
			differ := make([]bool, len(x)/n)
			for i := range differ {
				c, err := castValues(dt, dtB, x[i*n:(i+1)*n])
				if err != nil {
					differ[i] = true
					continue
				}
				copy(cast[i*nb:], c)
			}
			r.Compared += int64(len(differ))
			prog.add(int64(len(x) + len(y)))
			for i := range differ {
				xi, yi := cast[i*nb:(i+1)*nb], y[i*nb:(i+1)*nb]
				if !differ[i] && sameElement(dtB, xi, yi) {
					continue
				}
				r.Differing++
				if r.First == nil {
					r.First = coordsOf(blk.Sel, i)
					r.FirstA, r.FirstB = string(appendValue(nil, dt, x[i*n:(i+1)*n])), string(appendValue(nil, dtB, yi))
				}
				if d := math.Abs(loadFloat(dt, x[i*n:(i+1)*n]) - loadFloat(dtB, yi)); r.MaxAbs == nil || d > *r.MaxAbs {
					r.MaxAbs = &d
				}
			}
			return nil
		}
		r.Compared += int64(len(x) / n)
		prog.add(int64(2 * len(x)))
		if bytes.Equal(x, y) {
			return nil
		}
		for i := 0; i < len(x); i += n {
			if sameElement(dt, x[i:i+n], y[i:i+n]) {
				continue
			}
			r.Differing++
			if r.First == nil {
				r.First = coordsOf(blk.Sel, i/n)
				r.FirstA, r.FirstB = string(appendValue(nil, dt, x[i:i+n])), string(appendValue(nil, dt, y[i:i+n]))
			}
			if k := dt.Kind(); k == dtype.Int || k == dtype.Uint || k == dtype.Float {
				d := math.Abs(loadFloat(dt, x[i:i+n]) - loadFloat(dt, y[i:i+n]))
				if r.MaxAbs == nil || d > *r.MaxAbs {
					r.MaxAbs = &d
				}
			}
		}
		return nil
	})
}

// loadFloat reads one real element as a float64 (0 for other types).
func loadFloat(dt dtype.DataType, b []byte) float64 {
	v, _ := dtype.NumberOf(dt, b)
	return v.Float64()
}

// sameElement compares two elements: bytes, except that any NaN equals any
// NaN (and, for complex values, per component).
func sameElement(dt dtype.DataType, x, y []byte) bool {
	if bytes.Equal(x, y) {
		return true
	}
	switch dt.Kind() {
	case dtype.Float:
		return math.IsNaN(floatOf(x)) && math.IsNaN(floatOf(y))
	case dtype.Complex:
		h := len(x) / 2
		part := dtype.TypeFloat64
		if h == 4 {
			part = dtype.TypeFloat32
		}
		return sameElement(part, x[:h], y[:h]) && sameElement(part, x[h:], y[h:])
	}
	return false
}

// coordsOf returns the array coordinates of element i of sel's output.
func coordsOf(sel nd.Selection, i int) []int {
	out := make([]int, len(sel))
	for d := len(sel) - 1; d >= 0; d-- {
		c := sel[d].Count
		out[d] = sel[d].Start + (i%c)*sel[d].Step
		i /= c
	}
	return out
}

// printDiff writes a report for a shell user.
func printDiff(w io.Writer, pos []string, r *diffReport) {
	for _, d := range r.Metadata {
		fmt.Fprintf(w, "metadata %s\n", d)
	}
	for _, d := range r.Layout {
		fmt.Fprintf(w, "layout   %s\n", d)
	}
	if r.Compared > 0 || r.Differing > 0 {
		fmt.Fprintf(w, "values   %d of %d elements differ", r.Differing, r.Compared)
		if r.First != nil {
			fmt.Fprintf(w, "; first at %s: %s vs %s", coords(r.First), r.FirstA, r.FirstB)
		}
		if r.MaxAbs != nil {
			fmt.Fprintf(w, "; max |a-b| %g", *r.MaxAbs)
		}
		fmt.Fprintln(w)
	}
	if r.Same {
		fmt.Fprintf(w, "%s and %s hold the same values\n", pos[0], pos[1])
	}
}

// validateCopy compares every array of a copied hierarchy with its source
// (cast to the copy's data type), failing at the first difference.
func validateCopy(ctx context.Context, src, dst store.Reader, n *nodeInfo, root string, p copyPlan) error {
	for _, c := range n.Children {
		if err := validateCopy(ctx, src, dst, c, root, p); err != nil {
			return err
		}
	}
	if n.NodeType != "array" {
		return nil
	}
	_, rel := p.destPath(n.Path, root)
	a, err := zarr.OpenArray(ctx, src, n.Path, withLimits(ctx, zarr.WithMaxChunkBytes(p.budget))...)
	if err != nil {
		return err
	}
	b, err := zarr.OpenArray(ctx, dst, rel, withLimits(ctx, zarr.WithMaxChunkBytes(p.budget))...)
	if err != nil {
		return err
	}
	sel, err := a.Selection()
	if err != nil {
		return err
	}
	da, db := a.Metadata().DataType, b.Metadata().DataType
	return streamAll(ctx, []*zarr.Array{a, b}, sel, p.budget/8, func(blk streamBlock) error {
		x, err := castValues(da, db, blk.Data)
		if err != nil {
			return err
		}
		y := blk.More[0]
		if bytes.Equal(x, y) {
			return nil
		}
		n := db.Size()
		for i := 0; i < len(x); i += n {
			if !sameElement(db, x[i:i+n], y[i:i+n]) {
				return fmt.Errorf("validate: %s differs from its source at %v: %s vs %s", rel, coordsOf(blk.Sel, i/n),
					appendValue(nil, db, y[i:i+n]), appendValue(nil, db, x[i:i+n]))
			}
		}
		return nil
	})
}

// coords writes an element's coordinates as cp's errors do: [3, 16].
func coords(c []int) string {
	parts := make([]string, len(c))
	for i, v := range c {
		parts[i] = strconv.Itoa(v)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
