package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/zarr"
)

const errtextDir = "../../testdata/errtext"

// errtextRef is a NAME.json of testdata/errtext: what zarr-python reads.
type errtextRef struct {
	Shape      []int    `json:"shape"`
	FillValue  any      `json:"fill_value"`
	Values     []any    `json:"values"`
	ValueBytes int      `json:"value_bytes"`
	First      []string `json:"first"`
}

func readErrtextRef(t *testing.T, name string) errtextRef {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(errtextDir, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var r errtextRef
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPythonBareNaN (issue 27): Python's bare NaN and -Infinity as fill
// values (.zarray, zarr.json) read as zarr-python reads them; a bare NaN
// elsewhere (an attribute) is an error naming the document and the token,
// not a bare "malformed JSON".
func TestPythonBareNaN(t *testing.T) {
	for _, name := range []string{"v2_nan_fill", "v3_inf_fill"} {
		ref := readErrtextRef(t, name)
		out := runOK(t, "get", "--format", "csv", filepath.Join(errtextDir, name+".zarr"))
		flat := strings.FieldsFunc(out, func(r rune) bool { return r == ',' || r == '\n' })
		if len(flat) != len(ref.Values) {
			t.Fatalf("%s: %d values, zarr-python reads %d", name, len(flat), len(ref.Values))
		}
		spelled := map[string]string{"nan": "NaN", "-inf": "-Infinity", "inf": "Infinity"}
		for i, v := range ref.Values {
			want := fmt.Sprint(v) // zarr-python's value, non-finite ones spelled as Zarr does
			got := cmp.Or(spelled[flat[i]], flat[i])
			if got != want {
				t.Errorf("%s[%d]: %s, zarr-python reads %s", name, i, got, want)
			}
		}
		info := runOK(t, "info", filepath.Join(errtextDir, name+".zarr"))
		if !strings.Contains(info, ref.FillValue.(string)) {
			t.Errorf("%s: info does not show the fill value %v:\n%s", name, ref.FillValue, info)
		}
	}
	err := runFail(t, "info", filepath.Join(errtextDir, "v2_nan_attr.zarr"))
	if !errors.Is(err, zarr.ErrInvalidMetadata) || !strings.Contains(err.Error(), "Python's bare NaN at line 1") || !strings.Contains(err.Error(), `"missing"`) || !strings.Contains(err.Error(), "attributes") {
		t.Errorf("bare NaN in .zattrs: %v", err)
	}
}

// TestVLenOverLimit (issue 27): a valid string chunk of 6 MiB is over the
// default limit of a variable-length chunk: the error says so and names
// zarrcat's flag, never "corrupt"; with the flag, zarrcat reads what
// zarr-python reads.
func TestVLenOverLimit(t *testing.T) {
	a := filepath.Join(errtextDir, "v3_big_vlen.zarr")
	ref := readErrtextRef(t, "v3_big_vlen")
	err := runFail(t, "get", "--format", "json", a, "0:3")
	if !errors.Is(err, zarr.ErrTooLarge) || errors.Is(err, codecs.ErrCorrupt) || strings.Contains(err.Error(), "corrupt") ||
		!strings.Contains(err.Error(), "--max-vlen-chunk-bytes") || strings.Contains(err.Error(), "zarr.With") {
		t.Fatalf("6 MiB string chunk: %v", err)
	}
	out := runOK(t, "get", "--max-vlen-chunk-bytes", "8MiB", "--format", "json", a)
	var got []string
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, s := range got {
		total += len(s)
	}
	if len(got) != ref.Shape[0] || total != ref.ValueBytes || got[2][:3] != ref.First[2] {
		t.Errorf("with --max-vlen-chunk-bytes: %d strings, %d bytes; zarr-python reads %d, %d", len(got), total, ref.Shape[0], ref.ValueBytes)
	}
	// A metadata document over --max-metadata-bytes names that flag.
	err = runFail(t, "--max-metadata-bytes", "100", "info", a)
	if !errors.Is(err, zarr.ErrTooLarge) || !strings.Contains(err.Error(), "--max-metadata-bytes") || strings.Contains(err.Error(), "zarr.With") {
		t.Errorf("metadata over --max-metadata-bytes: %v", err)
	}
}

// TestFilterTypesBlameMetadata (issue 27): an astype filter whose types
// in the metadata are not those the chunks were written with is an error
// that points at the metadata, not only at the chunk.
func TestFilterTypesBlameMetadata(t *testing.T) {
	dst := filepath.Join(t.TempDir(), "a.zarr")
	src := filepath.Join(refDir, "..", "filters", "astype_i4_i2.zarr")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	meta, err := os.ReadFile(filepath.Join(dst, ".zarray"))
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(meta), `"encode_dtype": "<i2"`, `"encode_dtype": "<i1"`, 1)
	if bad == string(meta) {
		t.Fatalf("no encode_dtype <i2 in %s", meta)
	}
	if err := os.WriteFile(filepath.Join(dst, ".zarray"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	err = runFail(t, "get", dst)
	if !errors.Is(err, codecs.ErrCorrupt) || !strings.Contains(err.Error(), "the metadata does not give the codecs it was written with") {
		t.Errorf("astype types not those of the chunks: %v", err)
	}
}
