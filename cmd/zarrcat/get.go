package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/bits"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/pipeline"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/zarr"
)

// defaultMaxChunkBytes is get's per-chunk decode limit unless
// --max-chunk-bytes says otherwise: 512 MiB, lower than the library's
// zarr.MaxDecodedChunkBytes, since get decodes a whole chunk even to print
// a few of its values.
const defaultMaxChunkBytes = 512 << 20

// cmdGet writes the selected values of an array as .npy, text, csv, JSON
// or raw bytes, streaming: the selection is read in blocks of a quarter of
// --budget, the next read while the current block is written.
func cmdGet(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	flags, pos, err := splitArgs(args, map[string]bool{"format": true, "o": true, "max-chunk-bytes": true, "budget": true, "q": false,
		"points": true, "mask": true, "blocks": false, "oindex": false, "threshold": true, "edgeitems": true,
		"vmin": true, "vmax": true, "width": true})
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return fmt.Errorf("%w: get takes TARGET and an optional SELECTION%s", errUsage, quoteHint(pos))
	}
	if isStdoutPath(flags["o"]) {
		flags["o"] = "-" // -o /dev/stdout is stdout, text by default, as -o -
	}
	format, err := formatOf(flags["format"], flags["o"])
	if err != nil {
		return err
	}
	budget, err := budgetFlag(flags)
	if err != nil {
		return err
	}
	a, sel, err := openSelection(ctx, pos, flags, budget)
	var pw *pointwiseError
	if arr := a; arr != nil || errors.As(err, &pw) {
		if arr == nil {
			arr = pw.a
		}
		defer func() { err = readErr(pos[0], arr.Path(), err) }() // the array as typed
	}
	_, hasPts := flags["points"]
	_, hasMask := flags["mask"]
	if format == "png" && (errors.As(err, &pw) || hasPts || hasMask) {
		return fmt.Errorf("%w: --format png draws a 2-D selection of slices and indices, not points", errUsage)
	}
	if errors.As(err, &pw) { // index arrays NumPy broadcasts
		if tv, err := textViewFor(flags, format, stdout, budget); err != nil {
			return err
		} else if tv != nil && !pw.a.Metadata().DataType.VarLen() { // textview.go
			return tv.writePointwise(ctx, pw.a, pw.pts, stdout)
		}
		return getPoints(ctx, pw.a, pointSet{pw: &pw.pts}, pw.pts.Shape(), format, flags, stdout, stderr, budget)
	}
	if err != nil {
		return err
	}
	if pts, ok, err := pointsSelection(a, flags, pos); err != nil || ok { // gather.go
		if err != nil {
			return err
		}
		return getPoints(ctx, a, pts, []int{pts.Len()}, format, flags, stdout, stderr, budget)
	}
	if format == "png" { // png.go
		text := ""
		if len(pos) == 2 {
			text = pos[1]
		}
		return getPNG(ctx, a, sel, pos[0], text, flags, stdout, budget)
	}
	for _, f := range []string{"vmin", "vmax", "width"} {
		if _, ok := flags[f]; ok {
			return fmt.Errorf("%w: --%s is for --format png", errUsage, f)
		}
	}
	if a.Metadata().DataType.VarLen() { // strings.go
		return getVarLen(ctx, a, sel, format, flags, stdout, stderr, budget)
	}
	if tv, err := textViewFor(flags, format, stdout, budget); err != nil {
		return err
	} else if tv != nil && !a.Metadata().DataType.VarLen() { // textview.go
		return tv.write(ctx, a, sel, stdout)
	}
	if sel.NumElements() == 0 && (format == "text" || format == "csv") {
		fmt.Fprintf(stderr, "zarrcat: the selection is empty (shape %s): nothing to print\n", nd.PyShape(sel.Shape()))
	}
	var prog *progress
	if out := flags["o"]; out != "" && out != "-" {
		prog = newProgress(stderr, flags, "get") // not over values on the terminal
		prog.setTotal(int64(sel.NumElements()) * int64(a.Metadata().DataType.Size()))
	}
	err = writeOutput(flags["o"], stdout, func(w io.Writer) error {
		enc := newEncoder(w, format, a.Metadata().DataType, sel.Shape())
		if err := enc.begin(); err != nil {
			return err
		}
		err := stream(ctx, a, sel, blockBytes(budget), func(b streamBlock) error {
			prog.add(int64(len(b.Data)))
			return enc.values(b.Data)
		})
		if err != nil {
			return err
		}
		return enc.end()
	})
	prog.finish(err)
	return err
}

// budgetFlag parses --budget (default defaultBudget) and sets the Go
// runtime's soft memory limit to it (at least 64 MiB, the floor below
// which the collector would run all the time), so garbage is collected
// before the process grows past it.
func budgetFlag(flags map[string]string) (int64, error) {
	budget := int64(defaultBudget)
	if v, ok := flags["budget"]; ok {
		var err error
		if budget, err = parseBytes(v); err != nil {
			return 0, fmt.Errorf("%w: --budget: %v", errUsage, err)
		}
	}
	debug.SetMemoryLimit(max(budget, 64<<20))
	return budget, nil
}

// openSelection opens the array pos[0] names (with --max-chunk-bytes, and
// reads holding at most an eighth of budget in flight) and resolves the
// selection pos[1] (the whole array when absent).
func openSelection(ctx context.Context, pos []string, flags map[string]string, budget int64) (*zarr.Array, nd.Selection, error) {
	a, sel, _, err := openSelectionWith(ctx, pos, flags, func(bool) pipeline.Options {
		return pipeline.Options{MaxBytesInFlight: blockBytes(budget)}
	})
	return a, sel, err
}

// openSelectionWith is openSelection with the pipeline options opt returns
// for the array's store (local: store.IsLocal); it also reports that.
func openSelectionWith(ctx context.Context, pos []string, flags map[string]string, opt func(local bool) pipeline.Options) (*zarr.Array, nd.Selection, bool, error) {
	maxChunk := int64(defaultMaxChunkBytes)
	if v, ok := flags["max-chunk-bytes"]; ok {
		var err error
		if maxChunk, err = parseBytes(v); err != nil {
			return nil, nil, false, fmt.Errorf("%w: --max-chunk-bytes: %v", errUsage, err)
		}
	}
	var items []nd.Item
	if len(pos) == 2 {
		var err error
		if items, err = nd.ParseSelection(pos[1]); err != nil {
			return nil, nil, false, err
		}
	}
	st, nodePath, err := openTarget(ctx, pos[0])
	if err != nil {
		return nil, nil, false, err
	}
	local := store.IsLocal(st)
	a, err := zarr.OpenArray(ctx, st, nodePath, withLimits(ctx, zarr.WithMaxChunkBytes(maxChunk), zarr.WithPipeline(opt(local)))...)
	if err != nil {
		return nil, nil, false, targetErr(ctx, st, pos[0], nodePath, err)
	}
	if _, ok := flags["blocks"]; ok {
		if items, err = a.BlockItems(items...); err != nil {
			return nil, nil, false, err
		}
	}
	if _, ok := flags["oindex"]; ok {
		items = nd.Orthogonal(items)
	}
	if pts, ok, err := nd.NewPointwise(items, a.Shape()); err != nil {
		return nil, nil, false, fmt.Errorf("selection %s: %w", nd.Clip(pos[1]), err)
	} else if ok {
		return nil, nil, false, &pointwiseError{a: a, pts: pts}
	}
	sel, err := a.Selection(items...)
	if err != nil {
		return nil, nil, false, err
	}
	n := uint64(a.Metadata().DataType.Size())
	for _, d := range sel {
		hi, lo := bits.Mul64(n, uint64(d.Len()))
		if hi != 0 || lo > math.MaxInt64 {
			return nil, nil, false, fmt.Errorf("%w: selection %v of %s is more than 2^63 bytes", zarr.ErrTooLarge, sel, pos[0])
		}
		n = lo
	}
	return a, sel, local, nil
}

// pointwiseError carries a selection NumPy reads pointwise (index arrays
// that broadcast) out of openSelection, to get, which streams its points,
// listing them a batch at a time; other commands report it.
type pointwiseError struct {
	a   *zarr.Array
	pts nd.Pointwise
}

func (e *pointwiseError) Error() string {
	return "index arrays that broadcast select pointwise (NumPy's rule), which only get reads; --oindex selects orthogonally"
}

func (e *pointwiseError) Unwrap() error { return errUsage }

// parseBytes parses a positive byte count: digits, optionally followed by
// a unit as GNU coreutils read them: KiB, MiB, GiB, TiB or K, M, G, T
// (any case: powers of 1024), KB, MB, GB, TB (powers of 1000).
func parseBytes(s string) (int64, error) {
	num, mult := s, int64(1)
	units := []struct {
		suf  string
		mult int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}}
	for _, u := range units {
		if len(s) > len(u.suf) && strings.EqualFold(s[len(s)-len(u.suf):], u.suf) {
			num, mult = s[:len(s)-len(u.suf)], u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is not a positive byte count (digits, optionally followed by K, M, G, T or KiB, MiB, GiB, TiB: powers of 1024; KB, MB, GB, TB: of 1000)", s)
	}
	return n * mult, nil
}

// appendValue formats one element the way NumPy prints it, near enough:
// true/false, integers, shortest round-trip floats, complex as (re+imj),
// raw bits as hex.
func appendValue(dst []byte, dt dtype.DataType, b []byte) []byte {
	if out, ok := appendExtValue(dst, dt, b); ok {
		return out
	}
	switch dt.Kind() {
	case dtype.Bool:
		return strconv.AppendBool(dst, b[0] != 0)
	case dtype.Int, dtype.Uint:
		v, _ := dtype.NumberOf(dt, b)
		return append(dst, v.String()...)
	case dtype.Float:
		return appendFloat(dst, b)
	case dtype.Complex:
		h := len(b) / 2
		dst = append(dst, '(')
		dst = appendFloat(dst, b[:h])
		im := b[h:]
		if !math.Signbit(floatOf(im)) || math.IsNaN(floatOf(im)) {
			dst = append(dst, '+')
		}
		dst = appendFloat(dst, im)
		return append(dst, 'j', ')')
	}
	return append(dst, "0x"+new(big.Int).SetBytes(b).Text(16)...)
}

// floatOf decodes a little-endian float of 2, 4 or 8 bytes.
func floatOf(b []byte) float64 {
	dt := dtype.TypeFloat64
	switch len(b) {
	case 2:
		dt = dtype.TypeFloat16
	case 4:
		dt = dtype.TypeFloat32
	}
	v, _ := dtype.NumberOf(dt, b)
	return v.Float64()
}

// appendFloat formats a float with the shortest representation that reads
// back to the same value at its own precision.
func appendFloat(dst []byte, b []byte) []byte {
	v := floatOf(b)
	switch {
	case math.IsNaN(v):
		return append(dst, "nan"...)
	case math.IsInf(v, 1):
		return append(dst, "inf"...)
	case math.IsInf(v, -1):
		return append(dst, "-inf"...)
	}
	switch len(b) {
	case 2:
		// The shortest decimal that reads back to the same float16.
		for prec := 1; prec < 5; prec++ {
			s := strconv.FormatFloat(v, 'g', prec, 32)
			if f, err := strconv.ParseFloat(s, 32); err == nil && dtype.Float16FromFloat64(f) == dtype.Float16(binary.LittleEndian.Uint16(b)) {
				return append(dst, s...)
			}
		}
		return strconv.AppendFloat(dst, v, 'g', 5, 32)
	case 4:
		return strconv.AppendFloat(dst, v, 'g', -1, 32)
	}
	return strconv.AppendFloat(dst, v, 'g', -1, 64)
}
