package zarr

import (
	"context"
	"errors"
	"math"
	"strconv"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/store/mem"
)

// TestReadWriteByteSizeChecked: reads and writes compute their byte size
// with overflow checks, whatever the metadata let through. Finding 1: on
// [2^61] int64 (2^64 bytes, which wrapped to 0) ReadBytes returned no
// bytes, and ReadBytesInto(ctx, nil) and Write(ctx, a, []int64{}) succeeded.
// Open now refuses that metadata, so the array is built past it.
func TestReadWriteByteSizeChecked(t *testing.T) {
	ctx := context.Background()
	// 2^61 int64 on 64-bit platforms; on 32-bit ones 2^29 (2^32 bytes,
	// which metadata allows but an int cannot count).
	meta := &ArrayMetadata{Shape: []int{math.MaxInt/4 + 1}, DataType: dtype.TypeInt64, ChunkShape: []int{1024},
		ChunkKeyEncoding: DefaultKeyEncoding(), FillValue: make([]byte, 8),
		Codecs: []codecs.Spec{{Name: "bytes", Configuration: []byte(`{"endian":"little"}`)}}}
	if err := meta.Validate(); strconv.IntSize == 64 && !errors.Is(err, ErrInvalidMetadata) {
		t.Fatalf("Validate = %v; want ErrInvalidMetadata", err)
	}
	a, err := newArray(mem.New(), "a", meta, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, shape, err := a.ReadBytes(ctx); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadBytes = %d bytes of %v, %v; want ErrTooLarge", len(b), shape, err)
	}
	if err := a.ReadBytesInto(ctx, nil); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadBytesInto(nil) = %v; want ErrTooLarge", err)
	}
	if err := Write(ctx, a, []int64{}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Write(no data) = %v; want ErrTooLarge", err)
	}
	if v, _, err := Read[int64](ctx, a); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Read = %d values, %v; want ErrTooLarge", len(v), err)
	}
}
