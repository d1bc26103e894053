package zarr

// The string API: typed access to the variable-length data types ("string"
// and "variable_length_bytes", v2 "|O" with vlen-utf8 or vlen-bytes), and
// to the fixed-width ones as Go strings.
//
// Variable-length elements go through the one engine (pipeline.Read,
// pipeline.Write) like numbers: every operation builds a copy of the
// array's codec chain bound to a codecs.VLenArena of its own, whose vlen
// codec decodes each chunk into 8-byte handles (the chunk's bytes stay in
// the arena) and encodes handles back; the engine places handles like any
// fixed-size element, under the same in-flight cap; at the end the handles
// are resolved into strings. The chunk cache (WithCache) is not used for
// these arrays: handles mean something only to their operation.

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/pipeline"
	"github.com/gozarr/gozarr/sharding"
	"github.com/gozarr/gozarr/store"
)

// ReadStrings reads the selected elements of a string array into a new
// slice and returns it with the selection's shape: a variable-length
// "string" array (v2 "|O" with vlen-utf8), or a fixed-width
// fixed_length_utf32 ("<U") or null_terminated_bytes ("|S") array, whose
// elements lose their zero padding. Other types are ErrTypeMismatch. No
// items select the whole array. Chunks not stored read as the fill value.
//
// Memory: the handles (8 bytes per element) are allocated up front,
// bounded as for ReadBytes (ErrTooLarge); the strings share the decoded
// chunks most of whose elements they hold (4 bytes per element beside the
// text), and copy the few they take of the others.
func ReadStrings(ctx context.Context, a *Array, items ...nd.Item) ([]string, []int, error) {
	sel, err := a.Selection(items...)
	if err != nil {
		return nil, nil, err
	}
	out, err := ReadStringsSelection(ctx, a, sel)
	if err != nil {
		return nil, nil, err
	}
	return out, sel.Shape(), nil
}

// ReadStringsSelection is ReadStrings with an already normalised
// selection.
func ReadStringsSelection(ctx context.Context, a *Array, sel nd.Selection) ([]string, error) {
	switch d := a.meta.DataType; d.Kind() {
	case dtype.String, dtype.Bytes:
		b, err := readFixed(ctx, a, sel)
		if err != nil {
			return nil, err
		}
		out, err := dtype.Strings(d, b)
		if err != nil {
			return nil, fmt.Errorf("read %q: %w", a.path, err)
		}
		return out, nil
	}
	if err := checkVarRead(a, sel, dtype.TypeVarString, codecs.StringHeaderSize); err != nil {
		return nil, err
	}
	out := make([]string, sel.NumElements())
	err := readVar(ctx, a, sel, codecs.HeaderBytes(out), codecs.StringHeaderSize,
		func(arena *codecs.VLenArena, handles []byte, lo, hi int) error {
			if handles == nil {
				return arena.ResolveStringsInPlace(out[lo:hi])
			}
			return arena.ResolveStrings(handles, out[lo:hi])
		})
	if err != nil {
		clear(out) // no string is left with a handle for a length
		return nil, err
	}
	return out, nil
}

// ReadByteStrings reads the selected elements of a variable-length bytes
// array ("variable_length_bytes", v2 "|O" with vlen-bytes) into a new
// slice, as ReadStrings does strings. Each element has its own capacity;
// an element selected twice shares its memory.
func ReadByteStrings(ctx context.Context, a *Array, items ...nd.Item) ([][]byte, []int, error) {
	sel, err := a.Selection(items...)
	if err != nil {
		return nil, nil, err
	}
	out, err := ReadByteStringsSelection(ctx, a, sel)
	if err != nil {
		return nil, nil, err
	}
	return out, sel.Shape(), nil
}

// ReadByteStringsSelection is ReadByteStrings with an already normalised
// selection.
func ReadByteStringsSelection(ctx context.Context, a *Array, sel nd.Selection) ([][]byte, error) {
	if err := checkVarRead(a, sel, dtype.TypeVarBytes, codecs.BytesHeaderSize); err != nil {
		return nil, err
	}
	out := make([][]byte, sel.NumElements())
	err := readVar(ctx, a, sel, codecs.HeaderBytes(out), codecs.BytesHeaderSize,
		func(arena *codecs.VLenArena, handles []byte, lo, hi int) error {
			if handles == nil {
				return arena.ResolveBytesInPlace(out[lo:hi])
			}
			return arena.ResolveBytes(handles, out[lo:hi])
		})
	if err != nil {
		clear(out)
		return nil, err
	}
	return out, nil
}

// WriteStrings writes data (C order, the selection's shape) into the
// selected elements of a string array: variable-length, or fixed-width
// (each string must fit: dtype.PutStrings's errors otherwise). Strings
// must be valid UTF-8 (ErrInvalidValue). data is not copied and must not
// change during the call.
func WriteStrings(ctx context.Context, a *Array, data []string, items ...nd.Item) error {
	sel, err := a.Selection(items...)
	if err != nil {
		return err
	}
	return WriteStringsSelection(ctx, a, data, sel)
}

// WriteStringsSelection is WriteStrings with an already normalised
// selection.
func WriteStringsSelection(ctx context.Context, a *Array, data []string, sel nd.Selection) error {
	switch d := a.meta.DataType; d.Kind() {
	case dtype.String, dtype.Bytes:
		b, err := dtype.PutStrings(d, data)
		if err != nil {
			return fmt.Errorf("write %q: %w", a.path, err)
		}
		return a.WriteSelection(ctx, b, sel)
	}
	if err := checkVarType(a, dtype.TypeVarString, "WriteStrings"); err != nil {
		return err
	}
	for i, s := range data {
		if !utf8.ValidString(s) {
			return fmt.Errorf("write %q: %w: element %d is not valid UTF-8", a.path, ErrInvalidValue, i)
		}
	}
	return writeHandles(ctx, a, sel, len(data), func(arena *codecs.VLenArena, h []byte, lo, hi int) {
		arena.PutStrings(h, data[lo:hi])
	})
}

// WriteByteStrings writes data into the selected elements of a
// variable-length bytes array, as WriteStrings does strings.
func WriteByteStrings(ctx context.Context, a *Array, data [][]byte, items ...nd.Item) error {
	sel, err := a.Selection(items...)
	if err != nil {
		return err
	}
	return WriteByteStringsSelection(ctx, a, data, sel)
}

// WriteByteStringsSelection is WriteByteStrings with an already
// normalised selection.
func WriteByteStringsSelection(ctx context.Context, a *Array, data [][]byte, sel nd.Selection) error {
	if err := checkVarType(a, dtype.TypeVarBytes, "WriteByteStrings"); err != nil {
		return err
	}
	return writeHandles(ctx, a, sel, len(data), func(arena *codecs.VLenArena, h []byte, lo, hi int) {
		arena.PutBytes(h, data[lo:hi])
	})
}

// ErrInvalidValue reports a value that the array's data type cannot hold
// (a string that is not UTF-8).
var ErrInvalidValue = errors.New("invalid value for the data type")

// checkVarType reports an array whose type is not want.
func checkVarType(a *Array, want dtype.DataType, call string) error {
	if d := a.meta.DataType; d != want {
		return fmt.Errorf("%w: %s on array %q of %s (it takes %s)", ErrTypeMismatch, call, a.path, d, want)
	}
	return nil
}

// readFixed reads sel of a fixed-width array as bytes.
func readFixed(ctx context.Context, a *Array, sel nd.Selection) ([]byte, error) {
	n, err := a.allocBytes(sel)
	if err != nil {
		return nil, err
	}
	b := make([]byte, n)
	if err := a.ReadSelection(ctx, b, sel); err != nil {
		return nil, err
	}
	return b, nil
}

// checkVarRead reports whether sel of a can be read as values of type
// want, whose headers are stride bytes each: the type, and the output's
// size against WithMaxReadBytes and the platform (ErrTooLarge), before
// anything is allocated.
func checkVarRead(a *Array, sel nd.Selection, want dtype.DataType, stride int) error {
	call := "ReadStrings"
	if want == dtype.TypeVarBytes {
		call = "ReadByteStrings"
	}
	if err := checkVarType(a, want, call); err != nil {
		return err
	}
	n, err := a.allocBytes(sel)
	if err != nil {
		return err
	}
	// The output is a header per element (16 or 24 bytes), not a handle.
	if limit := a.opts.maxRead; limit > 0 && int64(n/dtype.HandleSize)*int64(stride) > limit {
		return fmt.Errorf("read %q: %w: selection %v is %d values of %d bytes each, more than the read limit of %d bytes (raise it with zarr.WithMaxReadBytes)",
			a.path, ErrTooLarge, sel, n/dtype.HandleSize, stride, limit)
	}
	if int64(n/dtype.HandleSize)*int64(stride) > int64(maxAlloc) {
		return fmt.Errorf("read %q: %w: selection %v is %d values, more than this platform can allocate", a.path, ErrTooLarge, sel, n/dtype.HandleSize)
	}
	return nil
}

// readVar reads sel of a variable-length array through the engine and
// resolves the values with resolve. The handles go straight
// into the length words of the output's headers (headers: the output's
// memory, stride bytes per element; resolve gets nil handles), so the
// read holds no handle buffer beside the output; on a 32-bit platform
// they go into a buffer of their own, passed to resolve.
func readVar(ctx context.Context, a *Array, sel nd.Selection, headers []byte, stride int,
	resolve func(arena *codecs.VLenArena, handles []byte, lo, hi int) error) error {
	g, arena, err := a.vlenGrid()
	if err != nil {
		return err
	}
	return a.inBatches(sel, arena, func(sub nd.Selection, lo, hi int) error {
		var handles []byte
		var err error
		if vlenInPlace {
			full := sub.FullShape()
			strides := make([]int, len(full))
			for d, s := len(full)-1, stride; d >= 0; d-- {
				strides[d] = s
				s *= full[d]
			}
			view := nd.View{Data: headers[lo*stride : hi*stride], Offset: 8, Shape: full, Strides: strides, ItemSize: dtype.HandleSize}
			err = pipeline.ReadView(ctx, a.st, g, sub, view, a.opts.pipe)
		} else {
			handles = make([]byte, (hi-lo)*dtype.HandleSize)
			err = pipeline.Read(ctx, a.st, g, sub, handles, a.opts.pipe)
		}
		if err == nil {
			err = resolve(arena, handles, lo, hi)
		}
		if le := (*codecs.LimitError)(nil); errors.As(err, &le) {
			// Over the limit, not corrupt: a valid chunk may hold more.
			return fmt.Errorf("read %q: %w: a chunk holds more than the %d bytes of values a chunk of this array may hold (raise the limit with zarr.WithMaxVLenChunkBytes)", a.path, ErrTooLarge, a.vlenLimit())
		}
		if err != nil {
			return fmt.Errorf("read %q: %w", a.path, err)
		}
		return nil
	})
}

// writeHandles writes n values into sel: put turns them into handles of
// the operation's arena, which the engine writes.
func writeHandles(ctx context.Context, a *Array, sel nd.Selection, n int, put func(arena *codecs.VLenArena, handles []byte, lo, hi int)) error {
	rw, ok := a.st.(pipeline.ReadWriter)
	if !ok {
		return fmt.Errorf("write %q: %w", a.path, store.ErrReadOnly)
	}
	if want := sel.NumElements(); n != want {
		return fmt.Errorf("write %q: %d values for a selection of %d elements", a.path, n, want)
	}
	if _, err := a.selectionBytes(sel); err != nil {
		return fmt.Errorf("write %w", err)
	}
	g, arena, err := a.vlenGrid()
	if err != nil {
		return err
	}
	// A sparse write reads and rewrites the chunks it touches: in batches,
	// so the arena holds the decoded ones of one batch at a time.
	return a.inBatches(sel, arena, func(sub nd.Selection, lo, hi int) error {
		handles := make([]byte, (hi-lo)*dtype.HandleSize)
		put(arena, handles, lo, hi)
		defer arena.Release()
		if err := pipeline.Write(ctx, rw, g, sub, handles, a.opts.pipe); err != nil {
			return fmt.Errorf("write %q: %w", a.path, err)
		}
		return nil
	})
}

// vlenGrid returns a copy of the array's grid whose chain is prepared with
// a new arena (codecs.PrepareOptions.VLen), without the chunk cache.
func (a *Array) vlenGrid() (*pipeline.Grid, *codecs.VLenArena, error) {
	arena := codecs.NewVLenArena(a.meta.FillValue, a.vlenLimit())
	opts := codecs.PrepareOptions{VLen: arena}
	g := *a.grid
	chain, err := a.grid.Chain.Prepare(a.grid.Chain.Repr(), opts)
	if err != nil {
		return nil, nil, fmt.Errorf("%q: %w", a.path, err)
	}
	g.Chain, g.Cache = chain, nil
	if r := a.grid.Rect; r != nil { // every chunk shape's chain, bound too
		g.Rect = &pipeline.Rectilinear{Edges: r.Edges, Prepare: prepareShapes(a.grid.Chain, opts)}
	}
	if g.Shard != nil {
		g.Shard, _ = sharding.LayoutOf(g.Chain) // the one the chain prepared
	}
	return &g, arena, nil
}

// WithMaxVLenChunkBytes bounds the content of one chunk (inner chunk, for
// a sharded array) of a variable-length array: the bytes of its elements,
// beside the count and the 4-byte lengths. A chunk holding more is
// ErrCorrupt, found before it is decompressed past the bound. The bound is
// also the chunk's share of the in-flight cap (pipeline.Options'
// MaxBytesInFlight), so a larger one reads fewer chunks at once, and the
// size of the write engine's encode buffers. Default: VLenBytesPerElement
// per element of the chunk, at least codecs.DefaultVLenChunkBytes (4
// MiB), at most the per-chunk limit (WithMaxChunkBytes).
func WithMaxVLenChunkBytes(n int64) Option { return func(o *options) { o.maxVLen = n } }

// VLenBytesPerElement is the mean element size the default content bound
// of a variable-length chunk allows (WithMaxVLenChunkBytes): 256 bytes, so
// zarr-python's default chunks (up to about 2 Mi elements) of strings up
// to that long read without an option.
const VLenBytesPerElement = 256

// vlenLimit returns the content bound of one decode unit.
func (a *Array) vlenLimit() int64 {
	if a.opts.maxVLen > 0 {
		return a.opts.maxVLen
	}
	n := int64(nd.NumElements(a.unitShape()))
	return min(max(codecs.DefaultVLenChunkBytes, VLenBytesPerElement*n), a.opts.chunkLimit())
}
