package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/nd"
	fsstore "github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"
)

// numpyRefCase is one case of testdata/selections/numpy_subscripts.json.
type numpyRefCase struct {
	Shape       []int  `json:"shape"`
	Text        string `json:"text"`
	ResultShape []int  `json:"result_shape"`
	Values      []int  `json:"values"`
	ToList      string `json:"tolist"`
	Error       string `json:"error"`
	OShape      []int  `json:"oindex_shape"`
	OValues     []int  `json:"oindex_values"`
	OError      string `json:"oindex_error"`
}

// arangeArrays writes np.arange(n).reshape(shape) as int64 arrays for the
// shapes of the NumPy reference set, returning their directories by shape.
func arangeArrays(t *testing.T, cases []numpyRefCase) map[string]string {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := fsstore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, c := range cases {
		key := fmt.Sprint(c.Shape)
		if out[key] != "" {
			continue
		}
		name := fmt.Sprintf("a%d", len(out))
		chunks := slices.Clone(c.Shape)
		for i := range chunks {
			chunks[i] = max(1, chunks[i]/2)
		}
		m, err := zarr.NewArrayMetadata(c.Shape, dtype.TypeInt64, chunks)
		if err != nil {
			t.Fatal(err)
		}
		a, err := zarr.CreateArray(ctx, st, name, m)
		if err != nil {
			t.Fatal(err)
		}
		vals := make([]int64, nd.NumElements(c.Shape))
		for i := range vals {
			vals[i] = int64(i)
		}
		if err := zarr.Write(ctx, a, vals); err != nil {
			t.Fatal(err)
		}
		out[key] = filepath.Join(dir, name)
	}
	return out
}

// numpyRefCases returns the cases of the NumPy selection reference set
// (testdata/selections/numpy_subscripts.json, make_numpy_subscripts.py).
func numpyRefCases(t *testing.T) []numpyRefCase {
	t.Helper()
	b, err := os.ReadFile("../../testdata/selections/numpy_subscripts.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Cases []numpyRefCase }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.Cases
}

// TestGetNumpySubscripts: zarrcat get --format json prints NumPy's
// tolist() of every case of the NumPy reference set (pointwise selections,
// and empty results nested as NumPy nests them: trial F6), and fails
// with exit status 2 where NumPy raises.
func TestGetNumpySubscripts(t *testing.T) {
	cases := numpyRefCases(t)
	arrays := arangeArrays(t, cases)
	empty := 0
	for _, c := range cases {
		target := arrays[fmt.Sprint(c.Shape)]
		var out, errw strings.Builder
		err := run(context.Background(), []string{"get", "--format", "json", target, c.Text}, &out, &errw)
		if c.Error != "" {
			if err == nil || exitCode(err) != 2 {
				t.Errorf("%v [%s]: %v (exit %d), NumPy raises %s", c.Shape, c.Text, err, exitCode(err), c.Error)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v [%s]: %v", c.Shape, c.Text, err)
			continue
		}
		var got, want any
		if err := json.Unmarshal([]byte(out.String()), &got); err != nil {
			t.Errorf("%v [%s]: %q: %v", c.Shape, c.Text, out.String(), err)
			continue
		}
		json.Unmarshal([]byte(c.ToList), &want)
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		if string(gb) != string(wb) {
			t.Errorf("%v [%s]: %s, NumPy's tolist() %s", c.Shape, c.Text, gb, wb)
		}
		if len(c.Values) == 0 {
			empty++
		}
	}
	if empty < 4 {
		t.Errorf("only %d empty results checked", empty)
	}
}

// TestGetNumpyOindex: get --oindex gives the orthogonal result the
// reference computed with NumPy (np.ix_: zarr-python's oindex) for every
// text with an index array or mask, as npy (shape and values), and fails
// with exit status 2 where that raises.
func TestGetNumpyOindex(t *testing.T) {
	cases := numpyRefCases(t)
	arrays := arangeArrays(t, cases)
	n := 0
	for _, c := range cases {
		if c.OShape == nil && c.OError == "" {
			continue
		}
		n++
		var out, errw bytes.Buffer
		err := run(context.Background(), []string{"get", "--oindex", "--format", "npy", arrays[fmt.Sprint(c.Shape)], c.Text}, &out, &errw)
		if c.OError != "" {
			if err == nil || exitCode(err) != 2 {
				t.Errorf("%v oindex[%s]: %v (exit %d), NumPy raises %s", c.Shape, c.Text, err, exitCode(err), c.OError)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v oindex[%s]: %v", c.Shape, c.Text, err)
			continue
		}
		got, err := npy.Read(&out)
		if err != nil {
			t.Fatal(err)
		}
		vals := make([]int, len(got.Data)/8)
		for i := range vals {
			vals[i] = int(int64(binary.LittleEndian.Uint64(got.Data[8*i:])))
		}
		if !equalInts(got.Shape, c.OShape) || !slices.Equal(vals, c.OValues) && len(c.OValues) > 0 {
			t.Errorf("%v oindex[%s]: shape %v values %v, NumPy %v %v", c.Shape, c.Text, got.Shape, vals, c.OShape, c.OValues)
		}
	}
	if n < 50 {
		t.Fatalf("only %d oindex cases", n)
	}
}

// TestCSVIsRFC4180 (trial F7): strings with quotes, commas and tabs come
// back whole through encoding/csv (RFC 4180), equal to what zarr-python
// wrote.
func TestCSVIsRFC4180(t *testing.T) {
	ctx := context.Background()
	target := filepath.Join(refDir, "..", "vlen", "v3_string.zarr")
	st, err := fsstore.New(target)
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.OpenArray(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := zarr.ReadStrings(ctx, a, nd.Range(0, 1))
	if err != nil {
		t.Fatal(err)
	}
	out := runOK(t, "get", "--format", "csv", target, "0:1")
	rec, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("encoding/csv: %v\n%s", err, out)
	}
	if len(rec) != 1 || !slices.Equal(rec[0], want) {
		t.Errorf("csv reads back %q, the array holds %q", rec, want)
	}
	hasQuote := false
	for _, s := range want {
		hasQuote = hasQuote || strings.Contains(s, `"`)
	}
	if !hasQuote {
		t.Error("the fixture has no quote to test")
	}
}

// TestStatsExact64 (trial F8): the extremes of 64-bit integer arrays print
// in full, as NumPy's min() and max() of them do.
func TestStatsExact64(t *testing.T) {
	for _, c := range []struct{ name, key, want string }{
		{"v3_fill_int64_min.zarr", "min:", "-9223372036854775808"},
		{"v3_fill_uint64_max.zarr", "max:", "18446744073709551615"},
	} {
		out := runOK(t, "stats", filepath.Join(refDir, c.name))
		found := false
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) == 2 && f[0] == c.key {
				found = f[1] == c.want
				if !found {
					t.Errorf("%s %s %s, want %s", c.name, c.key, f[1], c.want)
				}
			}
		}
		if !found {
			t.Errorf("%s: no %s %s in\n%s", c.name, c.key, c.want, out)
		}
	}
}

// TestHelpAndTypos (trial F9, F10, F28): COMMAND --help is that command's
// help (exit 0), version prints one, a typo of a command or a flag gets a
// suggestion, usage mistakes (a selection error included) exit 2 and
// errors of the data (stats of strings) exit 1.
func TestHelpAndTypos(t *testing.T) {
	a := filepath.Join(refDir, "v3_dtype_int16.zarr")
	for _, cmd := range []string{"info", "get", "ls", "tree", "stats", "cp", "diff", "consolidate", "clean"} {
		out := runOK(t, cmd, "--help")
		if !strings.HasPrefix(out, "zarrcat "+cmd) {
			t.Errorf("%s --help: %.60q", cmd, out)
		}
		if cmd == "info" || cmd == "ls" || cmd == "consolidate" || cmd == "clean" {
			if strings.Contains(out, "-q") {
				t.Errorf("%s --help mentions -q, which %s refuses", cmd, cmd)
			}
		}
	}
	if out := runOK(t, "--version"); !strings.HasPrefix(out, "zarrcat ") {
		t.Errorf("--version: %q", out)
	}
	for _, c := range []struct {
		args []string
		msg  string
		code int
	}{
		{[]string{"inof", a}, `did you mean "info"`, 2},
		{[]string{"get", "--fromat", "csv", a}, "did you mean --format", 2},
		{[]string{"get", a, "0;3"}, "not an integer", 2},
		{[]string{"get", a, "40"}, "out of bounds", 2},
		{[]string{"stats", filepath.Join(refDir, "..", "vlen", "v3_string.zarr")}, "only booleans", 1},
	} {
		var out, errw strings.Builder
		err := run(context.Background(), c.args, &out, &errw)
		if err == nil || !strings.Contains(err.Error(), c.msg) || exitCode(err) != c.code {
			t.Errorf("%v: %v (exit %d), want %q and exit %d", c.args, err, exitCode(err), c.msg, c.code)
		}
		if c.code == 2 && !strings.Contains(usageHint(err), "zarrcat help") {
			t.Errorf("%v: hint %q", c.args, usageHint(err))
		}
	}
}

// TestTextView (trial F12): text for people has a header, right-aligned
// columns, NumPy's summary past --threshold elements (the first and last
// --edgeitems along each dimension, the corner values those of the
// array), labelled planes for 4-D results, and a message for an empty
// result.
func TestTextView(t *testing.T) {
	a := filepath.Join(refDir, "v3_dtype_int16.zarr") // 31 × 19
	out := runOK(t, "get", "--threshold", "100", a)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 8 || !strings.HasPrefix(lines[0], "# shape (31, 19), int16, 589 elements") || lines[4] != "..." {
		t.Fatalf("summary:\n%s", out)
	}
	var full [][]int
	json.Unmarshal([]byte(runOK(t, "get", "--format", "json", a)), &full)
	width := len(lines[1])
	for i, r := range []int{0, 1, 2, -1, 28, 29, 30} {
		line := lines[1+i]
		if r < 0 {
			continue
		}
		if len(line) != width {
			t.Errorf("row %d not aligned: %q vs width %d", r, line, width)
		}
		f := strings.Fields(line)
		if len(f) != 7 || f[3] != "..." {
			t.Fatalf("row %d: %q", r, line)
		}
		for j, c := range []int{0, 1, 2, -1, 16, 17, 18} {
			if c >= 0 && f[j] != fmt.Sprint(full[r][c]) {
				t.Errorf("[%d, %d] prints %s, the array holds %d", r, c, f[j], full[r][c])
			}
		}
	}
	out = runOK(t, "get", "--edgeitems", "1", filepath.Join(refDir, "v3_ndim4.zarr"), "0:2, 0:2, 0:2, 0:3")
	for _, want := range []string{"[0, 0, :, :]", "[0, 1, :, :]", "[1, 0, :, :]", "[1, 1, :, :]"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("4-D view lacks %s:\n%s", want, out)
		}
	}
	if out := runOK(t, "get", "--threshold", "5", a, "100:200"); !strings.Contains(out, "empty") {
		t.Errorf("empty result: %q", out)
	}
	// A pipe without the flags gets every value, one space apart, as before.
	if out := runOK(t, "get", a, "0:2"); strings.Contains(out, "#") || len(strings.Fields(out)) != 38 {
		t.Errorf("plain text: %q", out)
	}
}

// TestDiffShardedAndDtype (trial F5, F17): diff reports different inner
// chunks and codecs of sharded copies, and compares values across a data
// type difference (0 of N differ after cp --dtype float64), still exiting
// 3 for the dtype.
func TestDiffShardedAndDtype(t *testing.T) {
	a := filepath.Join(refDir, "v3_dtype_int16.zarr")
	dir := t.TempDir()
	s1, s2 := filepath.Join(dir, "s1.zarr"), filepath.Join(dir, "s2.zarr")
	runOK(t, "cp", "--chunks", "8,8", "--shards", "16,16", "--codec", "zstd:3", a, s1)
	runOK(t, "cp", "--chunks", "4,4", "--shards", "16,16", "--codec", "gzip:5", a, s2)
	out := runOK(t, "diff", s1, s2)
	if !strings.Contains(out, "inner_chunk_shape: [8 × 8] vs [4 × 4]") || !strings.Contains(out, "inner_codecs:") {
		t.Errorf("diff of sharded copies:\n%s", out)
	}
	f32 := filepath.Join(refDir, "v3_dtype_float32.zarr")
	f64 := filepath.Join(dir, "f64.zarr")
	runOK(t, "cp", "--dtype", "float64", f32, f64)
	var outb strings.Builder
	err := run(context.Background(), []string{"diff", "--json", f32, f64}, &outb, &outb)
	var r diffReport
	json.Unmarshal([]byte(outb.String()), &r)
	if exitCode(err) != 3 || r.Compared == 0 || r.Differing != 0 {
		t.Errorf("diff float32 vs its float64 copy: exit %d, %d compared, %d differ", exitCode(err), r.Compared, r.Differing)
	}
	i8 := filepath.Join(dir, "i8.zarr")
	runOK(t, "cp", "--dtype", "float32", a, i8)
	outb.Reset()
	run(context.Background(), []string{"diff", "--json", f32, a}, &outb, &outb)
	json.Unmarshal([]byte(outb.String()), &r)
	if r.Compared != 0 {
		t.Errorf("diff of different shapes compared %d values", r.Compared)
	}
}

// TestInfoJSONRich (trial F16): info --json carries what the text does:
// dimension names, the chunk key encoding, the codecs as JSON, a sharded
// array's shard shape and index location.
func TestInfoJSONRich(t *testing.T) {
	var n map[string]any
	json.Unmarshal([]byte(runOK(t, "info", "--json", filepath.Join(refDir, "v3_dimnames_3d.zarr"))), &n)
	names, _ := n["dimension_names"].([]any)
	if fmt.Sprint(names) != "[time lat lon]" || n["chunk_key_encoding"] == nil || n["codecs_json"] == nil {
		t.Errorf("info --json: %v", n)
	}
	text := runOK(t, "info", filepath.Join(refDir, "v3_shard_start.zarr"))
	json.Unmarshal([]byte(runOK(t, "info", "--json", filepath.Join(refDir, "v3_shard_start.zarr"))), &n)
	if n["index_location"] != "start" || !strings.Contains(text, "shard_shape:") || n["shard_shape"] == nil {
		t.Errorf("sharded info --json: %v", n)
	}
	// Every field of info --json --size is explained in 'zarrcat help info'
	// (trial F16: "initialized" was a bare fraction, chunk_shape the shard).
	var sized map[string]any
	json.Unmarshal([]byte(runOK(t, "info", "--json", "--size", filepath.Join(refDir, "v3_shard_start.zarr"))), &sized)
	keys := slices.Collect(maps.Keys(sized))
	st, _ := sized["storage"].(map[string]any)
	keys = append(keys, slices.Collect(maps.Keys(st))...)
	help := commandHelp["info"]
	for _, k := range keys {
		if k != "path" && k != "node_type" && k != "zarr_format" && !strings.Contains(help, k) {
			t.Errorf("info --json field %q: 'zarrcat help info' does not explain it", k)
		}
	}
	if len(st) < 6 || !strings.Contains(help, "initialized, the fraction of them stored (0 to 1)") {
		t.Errorf("storage %v; help:\n%s", st, help)
	}
}

// TestByteUnits: --budget and --max-chunk-bytes take the units people
// type (1k, 512MB, 1G), as GNU coreutils reads them.
func TestByteUnits(t *testing.T) {
	for in, want := range map[string]int64{"1k": 1024, "1K": 1024, "512MB": 512e6, "1G": 1 << 30, "2GiB": 2 << 30, "64": 64, "3kib": 3072} {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("%s: %d, %v, want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"10XB", "k", "-1", "1.5G", ""} {
		if _, err := parseBytes(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
