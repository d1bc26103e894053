package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/nd"
	fsstore "github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"
)

// runOK runs a command line that must succeed and returns its stdout.
func runOK(t *testing.T, args ...string) string {
	t.Helper()
	var out, errw bytes.Buffer
	if err := run(context.Background(), args, &out, &errw); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return out.String()
}

// infoFields returns the "name: value" lines of zarrcat info.
func infoFields(t *testing.T, target string) map[string]string {
	fields := map[string]string{}
	for _, line := range strings.Split(runOK(t, "info", target), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			fields[k] = strings.TrimSpace(v)
		}
	}
	return fields
}

// TestCp copies corpus arrays and groups, plain and re-encoded, checks the
// copy's layout with info and its values with diff and --validate.
func TestCp(t *testing.T) {
	for _, c := range []struct {
		src    string
		flags  []string
		fields map[string]string
	}{
		{"v3_shard_start.zarr", nil, map[string]string{"shard_shape": "[21 × 20]", "inner_chunk_shape": "[7 × 5]", "index_location": "start (196 bytes)"}},
		{"v3_shard_start.zarr", []string{"--chunks", "10,10", "--shards", "20,40", "--codec", "blosc:lz4:shuffle:5"},
			map[string]string{"shard_shape": "[20 × 40]", "inner_chunk_shape": "[10 × 10]", "inner_codecs": `bytes{"endian":"little"} → blosc{"blocksize":0,"clevel":5,"cname":"lz4","shuffle":"shuffle"}`}},
		{"v2_dtype_int16.zarr", []string{"--codec", "zstd:3"}, map[string]string{"node_type": "array (zarr_format 3)", "chunk_shape": "[8 × 6]", "codecs": `bytes{"endian":"little"} → zstd{"checksum":false,"level":3}`}},
		{"v2_dtype_int16.zarr", []string{"--dtype", "float32", "--chunks", "5,5"}, map[string]string{"data_type": "float32", "chunk_shape": "[5 × 5]", "codecs": `bytes{"endian":"little"} → numcodecs.zlib{"level":1}`}},
		{"v3_dtype_float32.zarr", []string{"--codec", `{"name":"gzip","configuration":{"level":2}}`}, map[string]string{"codecs": `bytes{"endian":"little"} → gzip{"level":2}`}},
		{"v2_fill_nan.zarr", []string{"--codec", "none"}, map[string]string{"codecs": `bytes{"endian":"little"}`, "fill_value": `"NaN"`}},
	} {
		dst := filepath.Join(t.TempDir(), "copy.zarr")
		src := filepath.Join(refDir, c.src)
		args := append(append([]string{"cp", "--validate"}, c.flags...), src, dst)
		if out := runOK(t, args...); !strings.Contains(out, "validated") {
			t.Errorf("%v: %q", args, out)
		}
		got := infoFields(t, dst)
		for k, want := range c.fields {
			if got[k] != want {
				t.Errorf("%v: info %s = %q, want %q", args, k, got[k], want)
			}
		}
		if c.flags == nil || c.flags[0] != "--dtype" {
			if out := runOK(t, "diff", src, dst); !strings.Contains(out, "hold the same values") {
				t.Errorf("diff %s %s: %q", src, dst, out)
			}
		}
	}
	// A group: every node copied, as v3.
	dst := filepath.Join(t.TempDir(), "g.zarr")
	runOK(t, "cp", "--codec", "zstd:1", filepath.Join(refDir, "v2_group.zarr"), dst)
	out := runOK(t, "ls", dst)
	for _, want := range []string{"/ (group, v3)", "/flags (array, v3) uint8 [22] chunks [7]", "/sub (group, v3)", "/sub/data (array, v3) float64 [11 × 10]"} {
		if !strings.Contains(out, want) {
			t.Errorf("ls of the copied group lacks %q:\n%s", want, out)
		}
	}
	runOK(t, "diff", filepath.Join(refDir, "v2_group.zarr", "sub", "data"), filepath.Join(dst, "sub", "data"))
}

// TestCpErrors: a cast that overflows names the value and the type; an
// existing destination needs --resume; resume refuses other metadata.
func TestCpErrors(t *testing.T) {
	dir := t.TempDir()
	int16s := filepath.Join(refDir, "v3_dtype_int16.zarr")
	dst := filepath.Join(dir, "a.zarr")
	runOK(t, "cp", int16s, dst)
	for _, c := range []struct {
		args  []string
		msg   string
		usage bool
	}{
		{[]string{"cp", "--dtype", "uint8", int16s, filepath.Join(dir, "b.zarr")}, "overflows uint8", false},
		{[]string{"cp", "--dtype", "int8", filepath.Join(refDir, "v3_dtype_float32.zarr"), filepath.Join(dir, "c.zarr")}, "is not an integer int8 can hold", false},
		{[]string{"cp", int16s, dst}, "give --resume", false},
		{[]string{"cp", "--resume", "--codec", "gzip:1", int16s, dst}, "other metadata", false},
		{[]string{"cp", "--codec", "lzma", int16s, filepath.Join(dir, "d.zarr")}, "unknown codec spelling", true},
		{[]string{"cp", "--chunks", "0,3", int16s, filepath.Join(dir, "d.zarr")}, "positive integers", true},
		{[]string{"cp", "--chunks", "3", int16s, filepath.Join(dir, "d.zarr")}, "--chunks gives 1 dimension for an array of 2 dimensions", true},
		{[]string{"cp", int16s}, "SOURCE and DESTINATION", true},
	} {
		var out bytes.Buffer
		err := run(context.Background(), c.args, &out, &out)
		if err == nil || !strings.Contains(err.Error(), c.msg) || errors.Is(err, errUsage) != c.usage {
			t.Errorf("%v: %v; want an error saying %q (usage %v)", c.args, err, c.msg, c.usage)
		}
	}
}

// readTree returns every file under dir by relative path.
func readTree(t *testing.T, dir string) map[string][]byte {
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestCpResume: a copy missing some write units (never written: killed
// before) and with one damaged (a truncated shard) is completed by
// --resume, which writes those again and keeps the others, ending
// byte-identical to an uninterrupted copy.
func TestCpResume(t *testing.T) {
	src := filepath.Join(refDir, "v3_shard_start.zarr")
	flags := []string{"--chunks", "5,5", "--shards", "10,20", "--codec", "zstd:2"}
	full := filepath.Join(t.TempDir(), "full.zarr")
	runOK(t, append(append([]string{"cp"}, flags...), src, full)...)
	part := filepath.Join(t.TempDir(), "part.zarr")
	runOK(t, append(append([]string{"cp"}, flags...), src, part)...)
	want := readTree(t, full)
	var shards []string
	for k := range want {
		if strings.HasPrefix(k, "c/") {
			shards = append(shards, k)
		}
	}
	if len(shards) != 20 {
		t.Fatalf("%d shards, want 20", len(shards))
	}
	for _, k := range shards[:7] {
		os.Remove(filepath.Join(part, k))
	}
	damaged := filepath.Join(part, shards[7])
	if err := os.Truncate(damaged, int64(len(want[shards[7]])/2)); err != nil {
		t.Fatal(err)
	}
	out := runOK(t, append(append([]string{"cp", "--resume", "--json"}, flags...), src, part)...)
	if !strings.Contains(out, `"write_units_resumed": 12`) {
		t.Errorf("resume report: %s; want 12 units found complete", out)
	}
	got := readTree(t, part)
	if len(got) != len(want) {
		t.Fatalf("resumed copy has %d files, want %d", len(got), len(want))
	}
	for k, b := range want {
		if !bytes.Equal(got[k], b) {
			t.Errorf("%s differs from the uninterrupted copy", k)
		}
	}
}

// TestDiff: the same values (NaN equal to NaN) exit 0; a changed element
// is errDiffer with its coordinates and both values; other shapes are a
// metadata difference.
func TestDiff(t *testing.T) {
	ctx := context.Background()
	nan := filepath.Join(refDir, "v2_fill_nan.zarr")
	cp := filepath.Join(t.TempDir(), "nan.zarr")
	runOK(t, "cp", "--codec", "gzip:1", nan, cp)
	if out := runOK(t, "diff", nan, cp); !strings.Contains(out, "0 of 1248 elements differ") {
		t.Errorf("diff of a NaN-filled array and its copy: %q", out)
	}
	st, err := fsstore.New(cp)
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.OpenArray(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	items, err := nd.ParseSelection("17:18, 3:4")
	if err != nil {
		t.Fatal(err)
	}
	if err := zarr.Write(ctx, a, []float64{1234.5}, items...); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = run(ctx, []string{"diff", nan, cp}, &out, &out)
	if !errors.Is(err, errDiffer) || !strings.Contains(out.String(), "1 of 1248 elements differ; first at [17, 3]") || !strings.Contains(out.String(), "vs 1234.5") {
		t.Errorf("diff after changing [17, 3]: %v\n%s", err, out.String())
	}
	out.Reset()
	err = run(ctx, []string{"diff", "--json", filepath.Join(refDir, "v2_dtype_int16.zarr"), filepath.Join(refDir, "v3_dtype_int16.zarr")}, &out, &out)
	if !errors.Is(err, errDiffer) || !strings.Contains(out.String(), `"shape: [37 × 20] vs [31 × 19]"`) {
		t.Errorf("diff of arrays of other shapes: %v\n%s", err, out.String())
	}
}
