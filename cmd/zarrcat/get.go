package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/zarr"
)

// defaultMaxChunkBytes is get's per-chunk decode limit unless
// --max-chunk-bytes says otherwise: 512 MiB, lower than the library's
// zarr.MaxDecodedChunkBytes, since get decodes a whole chunk even to print
// a few of its values.
const defaultMaxChunkBytes = 512 << 20

// cmdGet writes the selected values of an array as .npy or text.
func cmdGet(ctx context.Context, args []string, stdout io.Writer) error {
	flags, pos, err := splitArgs(args, map[string]bool{"format": true, "o": true, "max-chunk-bytes": true})
	if err != nil {
		return err
	}
	maxChunk := int64(defaultMaxChunkBytes)
	if v, ok := flags["max-chunk-bytes"]; ok {
		if maxChunk, err = parseBytes(v); err != nil {
			return fmt.Errorf("%w: --max-chunk-bytes: %v", errUsage, err)
		}
	}
	if len(pos) < 1 || len(pos) > 2 {
		return fmt.Errorf("%w: get takes TARGET and an optional SELECTION", errUsage)
	}
	format := flags["format"]
	if format == "" {
		format = "text"
		if flags["o"] != "" {
			format = "npy"
		}
	}
	if format != "npy" && format != "text" {
		return fmt.Errorf("%w: --format must be npy or text, not %q", errUsage, format)
	}
	var items []nd.Item
	if len(pos) == 2 {
		if items, err = nd.ParseSelection(pos[1]); err != nil {
			return err
		}
	}
	st, nodePath, err := openTarget(ctx, pos[0])
	if err != nil {
		return err
	}
	a, err := zarr.OpenArray(ctx, st, nodePath, zarr.WithMaxChunkBytes(maxChunk))
	if errors.Is(err, zarr.ErrChunkTooLarge) {
		return fmt.Errorf("%w; for zarrcat get, raise it with --max-chunk-bytes (default 512MiB), e.g. --max-chunk-bytes=4GiB", err)
	}
	if err != nil {
		return err
	}
	data, shape, err := a.ReadAllBytes(ctx, items...)
	if err != nil {
		return err
	}
	dt := a.Metadata().DataType
	write := func(w io.Writer) error {
		if format == "npy" {
			return npy.Write(w, dt.NumpyDescr(), shape, data)
		}
		return writeText(w, dt, shape, data)
	}
	if out := flags["o"]; out != "" && out != "-" {
		return writeFileAtomic(out, write)
	}
	bw := bufio.NewWriterSize(stdout, 1<<16)
	if err := write(bw); err != nil {
		return err
	}
	return bw.Flush()
}

// parseBytes parses a positive byte count: digits, optionally followed by
// KiB, MiB, GiB or TiB.
func parseBytes(s string) (int64, error) {
	num, mult := s, int64(1)
	for i, suf := range []string{"KiB", "MiB", "GiB", "TiB"} {
		if n, ok := strings.CutSuffix(s, suf); ok {
			num, mult = n, 1<<(10*(i+1))
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is not a positive byte count (digits, optionally followed by KiB, MiB, GiB or TiB)", s)
	}
	return n * mult, nil
}

// writeFileAtomic writes a file through a temporary file and a rename, so a
// failed run never leaves a partial output.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".zarrcat-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := write(bw); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	// CreateTemp makes the file private (0600); the output is an ordinary file.
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// writeText writes values in C order: the last dimension as one line of
// space-separated values, a blank line between 2-D blocks. A 0-d selection
// is one value.
func writeText(w io.Writer, dt dtype.DataType, shape []int, data []byte) error {
	n := dt.Size()
	row := 1
	if len(shape) > 0 {
		row = shape[len(shape)-1]
	}
	plane := row
	if len(shape) > 1 {
		plane *= shape[len(shape)-2]
	}
	buf := make([]byte, 0, 64)
	for i := 0; i*n < len(data); i++ {
		if i > 0 {
			sep := " "
			if row == 0 || i%row == 0 {
				sep = "\n"
				if len(shape) > 2 && i%plane == 0 {
					sep = "\n\n"
				}
			}
			if _, err := io.WriteString(w, sep); err != nil {
				return err
			}
		}
		buf = appendValue(buf[:0], dt, data[i*n:(i+1)*n])
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	if len(data) > 0 {
		_, err := io.WriteString(w, "\n")
		return err
	}
	return nil
}

// appendValue formats one element the way NumPy prints it, near enough:
// true/false, integers, shortest round-trip floats, complex as (re+imj),
// raw bits as hex.
func appendValue(dst []byte, dt dtype.DataType, b []byte) []byte {
	le := binary.LittleEndian
	switch dt.Kind() {
	case dtype.Bool:
		return strconv.AppendBool(dst, b[0] != 0)
	case dtype.Int:
		var v int64
		switch len(b) {
		case 1:
			v = int64(int8(b[0]))
		case 2:
			v = int64(int16(le.Uint16(b)))
		case 4:
			v = int64(int32(le.Uint32(b)))
		case 8:
			v = int64(le.Uint64(b))
		}
		return strconv.AppendInt(dst, v, 10)
	case dtype.Uint:
		var v uint64
		switch len(b) {
		case 1:
			v = uint64(b[0])
		case 2:
			v = uint64(le.Uint16(b))
		case 4:
			v = uint64(le.Uint32(b))
		case 8:
			v = le.Uint64(b)
		}
		return strconv.AppendUint(dst, v, 10)
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
	switch len(b) {
	case 2:
		return float64(dtype.Float16(binary.LittleEndian.Uint16(b)).Float32())
	case 4:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b))
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
