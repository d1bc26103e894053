package zstdc_test

import (
	"bytes"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/codecs/zstdc"
)

// FuzzDecode decodes arbitrary bytes with libzstd and with the pure-Go
// codec under one limit: neither may return more than the limit, and
// where both succeed they agree. Seeds: testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	pure, _ := codecs.NewZstd(1, false)
	lib, _ := zstdc.New(1, false)
	for _, n := range []int{0, 5, 300} {
		enc, _ := pure.Encode(nil, bytes.Repeat([]byte("gozarr"), n))
		f.Add(enc, uint16(6*n))
	}
	f.Fuzz(func(t *testing.T, src []byte, limit uint16) {
		got, err := lib.Decode(nil, src, int(limit))
		if err == nil && len(got) > int(limit) {
			t.Fatalf("libzstd returned %d bytes, limit %d", len(got), limit)
		}
		want, perr := pure.Decode(nil, src, int(limit))
		if err == nil && perr == nil && !bytes.Equal(got, want) {
			t.Fatalf("libzstd and pure Go decode to different bytes")
		}
	})
}
