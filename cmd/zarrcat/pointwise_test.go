package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestGetPointwiseStreams: get of index arrays that broadcast to 10^6
// points ("[[0], [1], ..., [999]], [[0, 1, ..., 999]]", NumPy's 1000 x
// 1000 result) lists the points batch by batch within --budget, holding
// far less than the 16 bytes a point of listing them at once, and gives
// the values of the plain ":, :" read.
func TestGetPointwiseStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 10^6 points")
	}
	dir := t.TempDir()
	a, _ := writePointsArray(t, dir, 0)
	var rows, cols strings.Builder
	for i := range 1000 {
		if i > 0 {
			rows.WriteString(", ")
			cols.WriteString(", ")
		}
		rows.WriteString("[" + strconv.Itoa(i) + "]")
		cols.WriteString(strconv.Itoa(i))
	}
	text := "[" + rows.String() + "], [[" + cols.String() + "]]"
	out := filepath.Join(dir, "pw.raw")
	peak := peakHeap(func() {
		if err := run(context.Background(), []string{"get", "-q", "--budget", "8MiB", "--format", "raw", "-o", out, a, text}, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
	})
	per := float64(peak) / 1e6
	t.Logf("10^6 points: peak heap %d bytes above the start, %.2f a point", peak, per)
	if per > 8 {
		t.Errorf("get of 10^6 broadcast points: peak heap %d bytes above the start, %.1f a point; want at most 8", peak, per)
	}
	var plain bytes.Buffer
	if err := run(context.Background(), []string{"get", "--format", "raw", a, ":, :"}, &plain, io.Discard); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2e6 || !bytes.Equal(got, plain.Bytes()) {
		t.Errorf("%d bytes, the plain read %d, equal %v", len(got), plain.Len(), bytes.Equal(got, plain.Bytes()))
	}
}
