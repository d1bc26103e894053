package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/term"

	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/zarr"
)

// textView is get's text output for people, as NumPy prints arrays: a
// header line (shape, data type), columns right-aligned, a selection of
// more than threshold elements summarised to its first and last edge
// items along each dimension with "..." between, and each 2-D plane of a
// 3-D or 4-D result labelled with its leading indices. It is what a
// terminal gets (--threshold and --edgeitems change it, or ask for it on a
// pipe); scripts reading text from a pipe or a file get every value.
type textView struct {
	threshold, edge int
	block           int64 // bytes of values a streamed view reads at a time
}

// viewInMemory is the most elements a text view reads at once; a larger
// result shown whole (--threshold 0, or a threshold above its size) is
// streamed twice, block by block: once for the column width, once to print.
var viewInMemory = 1 << 16

// textViewFor returns the text view get should draw, or nil for the plain
// streamed text: a terminal on stdout, or --threshold/--edgeitems given.
// A view shown whole streams in blocks of blockBytes(budget).
func textViewFor(flags map[string]string, format string, stdout io.Writer, budget int64) (*textView, error) {
	if format != "text" || flags["o"] != "" && flags["o"] != "-" {
		return nil, nil
	}
	v := &textView{threshold: 1000, edge: 3, block: blockBytes(budget)}
	_, th := flags["threshold"]
	_, ed := flags["edgeitems"]
	for name, p := range map[string]*int{"threshold": &v.threshold, "edgeitems": &v.edge} {
		if s, ok := flags[name]; ok {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%w: --%s wants a number ≥ 0, not %q", errUsage, name, s)
			}
			*p = n
		}
	}
	if th || ed {
		return v, nil
	}
	if f, ok := stdout.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return v, nil
	}
	return nil, nil
}

// positions returns the output positions shown along a dimension of
// length n: all, or the first and last edge ones (-1 marks the "...").
func (v *textView) positions(n int, summarise bool) []int {
	if !summarise || n <= 2*v.edge {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	out := make([]int, 0, 2*v.edge+1)
	for i := range v.edge {
		out = append(out, i)
	}
	out = append(out, -1)
	for i := n - v.edge; i < n; i++ {
		out = append(out, i)
	}
	return out
}

// source returns the array index of output position k of dimension d.
func source(d nd.Dim, k int) int {
	if d.Order != nil {
		k = d.Order[k]
	}
	if d.Index != nil {
		return d.Index[k]
	}
	return d.Start + k*d.Step
}

// write reads the shown elements of sel (at most (2·edge+1)^rank when
// summarised) and prints them.
func (v *textView) write(ctx context.Context, a *zarr.Array, sel nd.Selection, w io.Writer) error {
	var kept []int // the kept (not dropped) dimensions
	for d, dim := range sel {
		if !dim.Drop {
			kept = append(kept, d)
		}
	}
	if v.whole(sel.NumElements()) {
		return v.drawStreamed(a, sel.Shape(), func(use func([]byte) error) error {
			return stream(ctx, a, sel, v.block, func(b streamBlock) error { return use(b.Data) })
		}, w)
	}
	return v.draw(ctx, a, sel.Shape(), len(sel), func(idx, c []int) {
		for d, dim := range sel {
			c[d] = source(dim, 0)
		}
		for i, d := range kept {
			c[d] = source(sel[d], idx[i])
		}
	}, w)
}

// writePointwise is write for a selection NumPy reads pointwise: the
// shown points alone are listed and read.
func (v *textView) writePointwise(ctx context.Context, a *zarr.Array, p nd.Pointwise, w io.Writer) error {
	shape := p.Shape()
	if v.whole(p.Len()) {
		return v.drawStreamed(a, shape, func(use func([]byte) error) error {
			return streamPoints(ctx, a, pointSet{pw: &p}, v.block, use)
		}, w)
	}
	return v.draw(ctx, a, shape, len(a.Shape()), func(idx, c []int) {
		flat := 0
		for d, i := range idx {
			flat = flat*shape[d] + i
		}
		p.Points(flat, 1, c)
	}, w)
}

// whole reports whether a result of total elements is shown whole and is
// too large to read at once: drawStreamed prints it.
func (v *textView) whole(total int) bool {
	return total > viewInMemory && (v.threshold == 0 || total <= v.threshold)
}

// drawStreamed is draw for a result shown whole, of any size: read (which
// hands the values in C order, a block at a time, to use) runs twice, for
// the width of the widest value and then to print, so memory is a block
// whatever the result's size. The text is draw's: header, right-aligned
// columns, each 2-D plane of a 3-D or larger result labelled, a blank line
// between planes.
func (v *textView) drawStreamed(a *zarr.Array, shape []int, read func(use func([]byte) error) error, w io.Writer) error {
	dt := a.Metadata().DataType
	n := dt.Size()
	width := 0
	var buf []byte
	floats := newNumpyLayout(dt)
	err := read(func(b []byte) error {
		for k := 0; k+n <= len(b); k += n {
			if floats != nil {
				floats.add(b[k : k+n])
				continue
			}
			buf = appendValue(buf[:0], dt, b[k:k+n])
			width = max(width, len(buf))
		}
		return nil
	})
	if err != nil {
		return err
	}
	if floats != nil {
		floats.done()
		width = floats.width()
	}
	r := len(shape)
	cols, plane := shape[r-1], shape[r-1]
	if r >= 2 {
		plane *= shape[r-2]
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	fmt.Fprintf(bw, "# shape %s, %s\n", nd.PyShape(shape), dt)
	i := 0
	label := make([]string, max(0, r-2))
	err = read(func(b []byte) error {
		for k := 0; k+n <= len(b); k, i = k+n, i+1 {
			switch {
			case i%plane == 0 && r >= 3:
				if i > 0 {
					bw.WriteString("\n\n")
				}
				q := i / plane
				for d := r - 3; d >= 0; d-- {
					label[d] = strconv.Itoa(q % shape[d])
					q /= shape[d]
				}
				fmt.Fprintf(bw, "[%s, :, :]\n", strings.Join(label, ", "))
			case i%cols == 0:
				if i > 0 {
					bw.WriteByte('\n')
				}
			default:
				bw.WriteByte(' ')
			}
			if floats != nil {
				buf = append(buf[:0], floats.format(b[k:k+n])...)
			} else {
				buf = appendValue(buf[:0], dt, b[k:k+n])
			}
			for range width - len(buf) {
				bw.WriteByte(' ')
			}
			if _, err := bw.Write(buf); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	bw.WriteByte('\n')
	return bw.Flush()
}

// draw prints a result of the given shape, reading the shown elements:
// at fills c (rank array coordinates) with those of output position idx.
func (v *textView) draw(ctx context.Context, a *zarr.Array, shape []int, rank int, at func(idx, c []int), w io.Writer) error {
	dt := a.Metadata().DataType
	total := nd.NumElements(shape)
	summarise := v.threshold > 0 && total > v.threshold
	header := fmt.Sprintf("# shape %s, %s", nd.PyShape(shape), dt)
	if summarise {
		header += fmt.Sprintf(", %d elements: the first and last %d along each dimension (--threshold 0 prints all)", total, v.edge)
	}
	if total == 0 {
		_, err := fmt.Fprintf(w, "%s: empty, no elements selected\n", header)
		return err
	}
	// The positions shown on each output dimension.
	pos := make([][]int, len(shape))
	for i, n := range shape {
		pos[i] = v.positions(n, summarise)
	}
	// The points to read: every combination of shown positions.
	var coords []int
	idx := make([]int, len(shape))
	var walk func(level int)
	walk = func(level int) {
		if level == len(shape) {
			c := make([]int, rank)
			at(idx, c)
			coords = append(coords, c...)
			return
		}
		for _, p := range pos[level] {
			if p < 0 {
				continue
			}
			idx[level] = p
			walk(level + 1)
		}
	}
	walk(0)
	var vals [][]byte
	if rank == 0 {
		b, _, err := a.ReadBytes(ctx)
		if err != nil {
			return err
		}
		vals = [][]byte{b}
	} else {
		pts := nd.Points{Rank: rank, Coords: coords}
		n := dt.Size()
		out := make([]byte, pts.Len()*n)
		if err := a.ReadPointsSelection(ctx, out, pts); err != nil {
			return err
		}
		for k := range pts.Len() {
			vals = append(vals, out[k*n:(k+1)*n])
		}
	}
	texts := make([]string, len(vals))
	width := 0
	floats := newNumpyLayout(dt)
	if len(shape) == 0 {
		floats = nil // a 0-d array prints as its scalar: 10.0, not 10.
	}
	if floats != nil {
		for _, b := range vals {
			floats.add(b)
		}
		floats.done()
	}
	for i, b := range vals {
		if floats != nil {
			texts[i] = floats.format(b)
		} else {
			texts[i] = string(appendValue(nil, dt, b))
		}
		width = max(width, len(texts[i]))
	}
	var sb strings.Builder
	sb.WriteString(header + "\n")
	next := 0
	r := len(shape)
	row := func(cols []int) {
		for j, c := range cols {
			if j > 0 {
				sb.WriteByte(' ')
			}
			if c < 0 {
				sb.WriteString("...") // as NumPy: not padded to the column
				continue
			}
			sb.WriteString(strings.Repeat(" ", width-len(texts[next])) + texts[next])
			next++
		}
		sb.WriteByte('\n')
	}
	var lines func(level int, label []string)
	lines = func(level int, label []string) {
		switch r - level {
		case 0: // a scalar
			sb.WriteString(texts[next] + "\n")
			next++
			return
		case 1:
			row(pos[level])
			return
		case 2:
			if len(label) > 0 {
				fmt.Fprintf(&sb, "[%s, :, :]\n", strings.Join(label, ", "))
			}
			for _, p := range pos[level] {
				if p < 0 {
					sb.WriteString("...\n")
					continue
				}
				row(pos[level+1])
			}
			return
		}
		for i, p := range pos[level] {
			if i > 0 {
				sb.WriteByte('\n')
			}
			if p < 0 {
				sb.WriteString("...\n")
				continue
			}
			lines(level+1, append(slices.Clone(label), strconv.Itoa(p)))
		}
	}
	lines(0, nil)
	_, err := io.WriteString(w, sb.String())
	return err
}
