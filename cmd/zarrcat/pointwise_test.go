package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
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

// TestTextViewPointwise: the text view (what a terminal gets) prints a
// pointwise result in NumPy's shape, summarised past --threshold as a box
// is: index arrays that broadcast to the whole array print as ":, :"
// does, and a small result shows the values get --format json gives.
func TestTextViewPointwise(t *testing.T) {
	const a = "../../testdata/refdata/v3_dtype_int16.zarr" // 31 x 19
	var rows, cols []string
	for i := range 31 {
		rows = append(rows, "["+strconv.Itoa(i)+"]")
	}
	for j := range 19 {
		cols = append(cols, strconv.Itoa(j))
	}
	whole := "[" + strings.Join(rows, ", ") + "], [[" + strings.Join(cols, ", ") + "]]"
	get := func(args ...string) string {
		t.Helper()
		var out strings.Builder
		if err := run(context.Background(), append([]string{"get"}, args...), &out, io.Discard); err != nil {
			t.Fatalf("get %v: %v", args, err)
		}
		return out.String()
	}
	pw, box := get("--threshold", "10", a, whole), get("--threshold", "10", a, ":, :")
	if pw != box || !strings.Contains(pw, "# shape (31, 19)") || !strings.Contains(pw, "...") {
		t.Errorf("pointwise view:\n%s\nbox view:\n%s", pw, box)
	}
	view := get("--threshold", "10", a, "[[0], [2]], [1, 3]")
	var nested [][]int
	if err := json.Unmarshal([]byte(get("--format", "json", a, "[[0], [2]], [1, 3]")), &nested); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(view), "\n")
	if len(lines) != 3 || lines[0] != "# shape (2, 2), int16" || len(nested) != 2 {
		t.Fatalf("view %q, json %v", view, nested)
	}
	for r, line := range lines[1:] {
		if got := strings.Fields(line); !slices.Equal(got, []string{strconv.Itoa(nested[r][0]), strconv.Itoa(nested[r][1])}) {
			t.Errorf("row %d: %q, json %v", r, line, nested[r])
		}
	}
}
