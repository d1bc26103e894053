package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGetNarrowTypes prints int4 and float8_e4m3fn arrays stored with
// packbits and bytes, as text and JSON.
func TestGetNarrowTypes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, meta string, chunk []byte) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Join(p, "c"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "zarr.json"), []byte(meta), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "c", "0"), chunk, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	int4 := write("int4.zarr", `{"zarr_format": 3, "node_type": "array", "shape": [5], "data_type": "int4",
	  "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5]}},
	  "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
	  "codecs": [{"name": "packbits", "configuration": {"padding_encoding": "first_byte"}}]}`, []byte{4, 0xe1, 0x87, 0x00})
	// float8_e4m3fn 0x3c = 1.5, 0xb8 = -1, 0x7f = NaN, 0x01 = 2^-9.
	f8 := write("f8.zarr", `{"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "float8_e4m3fn",
	  "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
	  "chunk_key_encoding": {"name": "default"}, "fill_value": "NaN",
	  "codecs": [{"name": "bytes"}]}`, []byte{0x3c, 0xb8, 0x7f, 0x01})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"get", int4}, "1 -2 7 -8 0"},
		{[]string{"get", "--format", "json", int4}, "[1, -2, 7, -8, 0]"},
		{[]string{"get", f8}, "1.5 -1 nan 0.001953125"},
		{[]string{"get", "--format", "json", f8}, "[1.5, -1, null, 0.001953125]"},
	} {
		got := strings.Join(strings.Fields(strings.NewReplacer("[", " [ ", "]", " ] ", ",", " ").Replace(runOK(t, tc.args...))), " ")
		want := strings.Join(strings.Fields(strings.NewReplacer("[", " [ ", "]", " ] ", ",", " ").Replace(tc.want)), " ")
		if got != want {
			t.Errorf("%v: %q, want %q", tc.args, got, want)
		}
	}
	// stats: int4 1 -2 7 -8 0 (fill 0); float8 1.5 -1 NaN 2^-9 (fill NaN).
	if st := runOK(t, "stats", "--json", int4); !strings.Contains(st, `"min": -8`) || !strings.Contains(st, `"max": 7`) {
		t.Errorf("stats int4: %s", st)
	}
	if st := runOK(t, "stats", "--json", f8); !strings.Contains(st, `"min": -1`) || !strings.Contains(st, `"max": 1.5`) || !strings.Contains(st, `"nan": 1`) {
		t.Errorf("stats float8: %s", st)
	}
	if info := runOK(t, "info", int4); !strings.Contains(info, "int4") || !strings.Contains(info, "packbits") {
		t.Errorf("info: %s", info)
	}
}
