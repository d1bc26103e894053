package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/zarr"
)

// vlenItemBytes is what a block of a variable-length selection is cut by
// per element: the handle, the string header and a short string.
const vlenItemBytes = 64

// getVarLen is get for variable-length string and bytes arrays: values
// read block by block through zarr.ReadStringsSelection (or the bytes
// one) and printed quoted (strings "...", bytes b"..."), JSON strings in
// JSON; a .npy holds NumPy fixed-width "<U" (or "|S") of the longest
// value, found by a first pass over the selection. raw has no meaning
// for them.
func getVarLen(ctx context.Context, a *zarr.Array, sel nd.Selection, format string, flags map[string]string, stdout, stderr io.Writer, budget int64) error {
	if isObjectType(a.Metadata().DataType) {
		return getObjects(ctx, a, sel, format, flags, stdout, budget) // objects.go
	}
	if format == "raw" {
		return fmt.Errorf("%w: --format raw: %s elements have no fixed-size form (use npy, text, csv or json)", errUsage, a.Metadata().DataType)
	}
	dt := a.Metadata().DataType
	blocks := func(use func([]string) error) error {
		for sub := range varBlocks(a, sel, budget) {
			vals, err := readVarBlock(ctx, a, sub)
			if err == nil {
				err = use(vals)
			}
			if err != nil {
				return err
			}
		}
		return ctx.Err()
	}
	fixed := dt // the NumPy type of the .npy: the longest value's width
	if format == "npy" {
		width := 1
		if err := blocks(func(vals []string) error {
			for _, v := range vals {
				n := len(v)
				if dt == dtype.TypeVarString {
					n = utf8.RuneCountInString(v)
				}
				width = max(width, n)
			}
			return nil
		}); err != nil {
			return err
		}
		var err error
		if dt == dtype.TypeVarBytes {
			fixed, err = dtype.FixedBytes(width)
		} else {
			fixed, err = dtype.FixedUTF32(width)
		}
		if err != nil {
			return fmt.Errorf("%w: a value of %d characters is too long for a .npy (use text, csv or json)", zarr.ErrTooLarge, width)
		}
	}
	var prog *progress
	if out := flags["o"]; out != "" && out != "-" {
		prog = newProgress(stderr, flags, "get")
		prog.setTotal(int64(sel.NumElements()) * dtype.HandleSize)
	}
	err := writeOutput(flags["o"], stdout, func(w io.Writer) error {
		enc := newEncoder(w, format, fixed, sel.Shape())
		if err := enc.begin(); err != nil {
			return err
		}
		err := blocks(func(vals []string) error {
			prog.add(int64(len(vals)) * dtype.HandleSize)
			if format == "npy" {
				b, err := dtype.PutStrings(fixed, vals)
				if err != nil {
					return err
				}
				return enc.values(b)
			}
			return enc.strings(vals, dt == dtype.TypeVarBytes)
		})
		if err != nil {
			return err
		}
		return enc.end()
	})
	prog.finish(err)
	return err
}

// strings writes the next values of a variable-length array in text,
// csv or json, as values does fixed-size elements.
func (e *encoder) strings(vals []string, isBytes bool) error {
	return e.each(len(vals), func(dst []byte, k int) []byte {
		if e.form == "csv" {
			if isBytes {
				return appendCSV(dst, "b"+strconv.QuoteToASCII(vals[k]))
			}
			return appendCSV(dst, vals[k])
		}
		return appendVarValue(dst, vals[k], isBytes, e.form == "json")
	})
}

// appendVarValue formats one variable-length value: a string quoted the
// Go way, bytes as b"..." (ASCII, other bytes escaped), and in JSON a JSON
// string of either.
func appendVarValue(dst []byte, v string, isBytes, asJSON bool) []byte {
	if isBytes {
		v = "b" + strconv.QuoteToASCII(v)
	} else if !asJSON {
		return strconv.AppendQuote(dst, v)
	}
	if !asJSON {
		return append(dst, v...)
	}
	b, _ := json.Marshal(v) // a string always marshals
	return append(dst, b...)
}

// readVarBlock reads sel of a variable-length array as strings (bytes as
// their bytes).
func readVarBlock(ctx context.Context, a *zarr.Array, sel nd.Selection) ([]string, error) {
	if a.Metadata().DataType != dtype.TypeVarBytes {
		return zarr.ReadStringsSelection(ctx, a, sel)
	}
	bs, err := zarr.ReadByteStringsSelection(ctx, a, sel)
	vals := make([]string, len(bs))
	for i, b := range bs {
		vals[i] = string(b)
	}
	return vals, err
}

// writeVarBlock writes vals into sel of a variable-length array.
func writeVarBlock(ctx context.Context, a *zarr.Array, sel nd.Selection, vals []string) error {
	if a.Metadata().DataType != dtype.TypeVarBytes {
		return zarr.WriteStringsSelection(ctx, a, vals, sel)
	}
	bs := make([][]byte, len(vals))
	for i, v := range vals {
		bs[i] = []byte(v)
	}
	return zarr.WriteByteStringsSelection(ctx, a, bs, sel)
}

// copyVarUnit is cp's copy of one write unit (sel, stored at key) of a
// variable-length array a into b; with resume, a unit stored that reads
// back equal is left alone (skipped).
func copyVarUnit(ctx context.Context, dst store.Reader, a, b *zarr.Array, key string, sel nd.Selection, resume bool) (skipped bool, err error) {
	vals, err := readVarBlock(ctx, a, sel)
	if err != nil {
		return false, err
	}
	if resume {
		if _, err := valueSize(ctx, dst, key); err == nil {
			if back, err := readVarBlock(ctx, b, sel); err == nil && slices.Equal(back, vals) {
				return true, nil
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return false, err
		}
	}
	return false, writeVarBlock(ctx, b, sel, vals)
}

// compareVarValues is diff's comparison of two variable-length arrays of
// one type, block by block.
func compareVarValues(ctx context.Context, a, b *zarr.Array, sel nd.Selection, budget int64, r *diffReport, prog *progress) error {
	isBytes := a.Metadata().DataType == dtype.TypeVarBytes
	for sub := range varBlocks(a, sel, budget) {
		x, err := readVarBlock(ctx, a, sub)
		if err != nil {
			return err
		}
		y, err := readVarBlock(ctx, b, sub)
		if err != nil {
			return err
		}
		r.Compared += int64(len(x))
		prog.add(int64(2*len(x)) * dtype.HandleSize)
		for i := range x {
			if x[i] == y[i] {
				continue
			}
			r.Differing++
			if r.First == nil {
				r.First = coordsOf(sub, i)
				r.FirstA, r.FirstB = string(appendVarValue(nil, x[i], isBytes, false)), string(appendVarValue(nil, y[i], isBytes, false))
			}
		}
	}
	return ctx.Err()
}
