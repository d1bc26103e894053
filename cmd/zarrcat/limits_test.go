package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// chunkedArray writes a uint8 v3 array of shape [2*chunk] and chunk shape
// [chunk] (no chunk stored: it reads as fill) in a temporary directory.
func chunkedArray(t *testing.T, chunk int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "a.zarr")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	doc := fmt.Sprintf(`{"zarr_format":3,"node_type":"array","shape":[%d],"data_type":"uint8",
"chunk_grid":{"name":"regular","configuration":{"chunk_shape":[%d]}},
"chunk_key_encoding":{"name":"default"},"fill_value":7,
"codecs":[{"name":"bytes"},{"name":"zstd","configuration":{"level":1,"checksum":false}}]}`, 2*chunk, chunk)
	if err := os.WriteFile(filepath.Join(dir, "zarr.json"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestMaxChunkBytes: get refuses arrays whose chunks decode to more than
// --max-chunk-bytes (default defaultMaxChunkBytes, 512 MiB) and says how
// to raise it (finding 10); info describes them whatever their size.
func TestMaxChunkBytes(t *testing.T) {
	ctx := context.Background()
	big := chunkedArray(t, defaultMaxChunkBytes+1)
	small := chunkedArray(t, 2<<20)
	cases := []struct {
		args  []string
		out   string // stdout on success
		err   string // error substring, "" for success
		usage bool
	}{
		{[]string{"get", big, "0:3"}, "", "--max-chunk-bytes", false},
		{[]string{"get", "--max-chunk-bytes", "1GiB", big, "0:3"}, "7 7 7\n", "", false},
		{[]string{"get", small, "5:7"}, "7 7\n", "", false},
		{[]string{"get", "--max-chunk-bytes=1MiB", small, "5:7"}, "", "1048576", false},
		{[]string{"get", "--max-chunk-bytes=2097152", small, "5:7"}, "7 7\n", "", false},
		{[]string{"get", "--max-chunk-bytes", "2097151", small}, "", "--max-chunk-bytes", false},
		{[]string{"get", "--max-chunk-bytes", "lots", small}, "", "max-chunk-bytes", true},
		{[]string{"get", "--max-chunk-bytes", "0", small}, "", "max-chunk-bytes", true},
		{[]string{"get", "--max-chunk-bytes", "-1KiB", small}, "", "max-chunk-bytes", true},
		{[]string{"get", "--max-chunk-bytes", "99999999999TiB", small}, "", "max-chunk-bytes", true},
		{[]string{"info", big}, "", "", false},
	}
	for _, c := range cases {
		var out, errw bytes.Buffer
		err := run(ctx, c.args, &out, &errw)
		if c.err == "" {
			if err != nil {
				t.Errorf("%v: %v", c.args, err)
			} else if c.out != "" && out.String() != c.out {
				t.Errorf("%v: output %q, want %q", c.args, out.String(), c.out)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) || errors.Is(err, errUsage) != c.usage {
			t.Errorf("%v: error %v; want one containing %q (usage %v)", c.args, err, c.err, c.usage)
		}
	}
	var out bytes.Buffer
	if err := run(ctx, []string{"info", big}, &out, &out); err != nil || !strings.Contains(out.String(), fmt.Sprintf("%d bytes decoded", defaultMaxChunkBytes+1)) {
		t.Errorf("info of the big array: %v\n%s", err, out.String())
	}
}

// TestHugeShapes: get on an array whose size overflows (finding 1: it
// printed nothing and exited 0) is one clear error; one too large to
// allocate (finding 2: it panicked) streams in bounded blocks until
// stopped, instead of allocating it whole.
func TestHugeShapes(t *testing.T) {
	for _, c := range []struct{ shape, dtype, chunks, msg string }{
		{"[2305843009213693952]", "int64", "[1024]", "more than 2^63 bytes"},
		{"[1000000000000000000]", "uint8", "[1000000]", ""},
	} {
		dir := filepath.Join(t.TempDir(), "a.zarr")
		doc := fmt.Sprintf(`{"zarr_format":3,"node_type":"array","shape":%s,"data_type":%q,
"chunk_grid":{"name":"regular","configuration":{"chunk_shape":%s}},
"chunk_key_encoding":{"name":"default"},"fill_value":0,"codecs":[{"name":"bytes","configuration":{"endian":"little"}}]}`, c.shape, c.dtype, c.chunks)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "zarr.json"), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		if c.msg != "" {
			var out bytes.Buffer
			err := run(context.Background(), []string{"get", dir}, &out, &out)
			if err == nil || !strings.Contains(err.Error(), c.msg) || out.Len() != 0 {
				t.Errorf("get %s %s: %v, output %q; want an error saying %q", c.shape, c.dtype, err, out.String(), c.msg)
			}
			continue
		}
		ctx, cancel := context.WithCancel(context.Background())
		w := &stopAfter{n: 10 << 20, cancel: cancel}
		err := run(ctx, []string{"get", "--format", "raw", dir}, w, w)
		cancel()
		if !errors.Is(err, context.Canceled) || w.got < w.n {
			t.Errorf("get %s %s: %v after %d bytes; want streaming until cancelled after %d", c.shape, c.dtype, err, w.got, w.n)
		}
	}
}

// stopAfter counts what is written and cancels a context after n bytes.
type stopAfter struct {
	n, got int
	cancel func()
}

func (s *stopAfter) Write(p []byte) (int, error) {
	s.got += len(p)
	if s.got >= s.n {
		s.cancel()
	}
	return len(p), nil
}
