package main

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/pyjson"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/zarr"
)

// isObjectType reports the Zarr v2 object arrays that hold values other
// than strings: json2 and msgpack2 objects, vlen-array ragged arrays.
func isObjectType(d dtype.DataType) bool {
	return d == dtype.TypeVarObject || d == dtype.TypeVarArray
}

// getObjects is get for object and ragged arrays: values read block by
// block through zarr.ReadObjectsSelection, each printed as the JSON
// Python writes for it (NaN and infinities as Python's NaN, Infinity; null
// in --format json, where JSON has no such tokens); in CSV each is one
// quoted field. They have no .npy or raw form (a NumPy object array is
// stored pickled).
func getObjects(ctx context.Context, a *zarr.Array, sel nd.Selection, format string, flags map[string]string, stdout io.Writer, budget int64) error {
	if format == "raw" || format == "npy" {
		return fmt.Errorf("%w: --format %s: %s elements have no fixed-size form (use text, csv or json)", errUsage, format, a.Metadata().DataType)
	}
	return writeOutput(flags["o"], stdout, func(w io.Writer) error {
		enc := newEncoder(w, format, a.Metadata().DataType, sel.Shape())
		if err := enc.begin(); err != nil {
			return err
		}
		for sub := range varBlocks(a, sel, budget) {
			vals, err := zarr.ReadObjectsSelection(ctx, a, sub)
			if err != nil {
				return err
			}
			err = enc.each(len(vals), func(dst []byte, k int) []byte {
				v := vals[k]
				if format == "json" {
					v = jsonSafe(v)
				}
				text, err := pyjson.AppendText(nil, v)
				if err != nil { // []byte (msgpack2's bin): Python's b"..."
					text = []byte(fmt.Sprintf("%v", v))
					if b, ok := v.([]byte); ok {
						text = []byte("b" + strconv.QuoteToASCII(string(b)))
					}
				}
				if format == "csv" {
					return appendCSVField(dst, string(text))
				}
				return append(dst, text...)
			})
			if err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		return enc.end()
	})
}

// jsonSafe replaces what JSON cannot spell (NaN, infinities, bytes) by
// null and base64-free strings, for --format json.
func jsonSafe(v any) any {
	switch x := v.(type) {
	case float64:
		if x != x || x > 1.7976931348623157e308 || x < -1.7976931348623157e308 {
			return nil
		}
	case []byte:
		return "b" + strconv.QuoteToASCII(string(x))
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonSafe(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonSafe(e)
		}
		return out
	}
	return v
}

// appendCSVField appends s as one RFC 4180 field: quoted, quotes doubled.
func appendCSVField(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			dst = append(dst, '"')
		}
		dst = append(dst, s[i])
	}
	return append(dst, '"')
}
