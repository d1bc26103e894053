package zarr

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// addRefdataSeeds adds every file called name under the reference corpus.
func addRefdataSeeds(f *testing.F, name string, add func([]byte)) {
	f.Helper()
	_ = filepath.WalkDir(refdata, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == name {
			if b, err := os.ReadFile(path); err == nil {
				add(b)
			}
		}
		return nil
	})
}

// parseFailed reports whether a parse failed, failing t when the error
// wraps neither metadata sentinel.
func parseFailed(t *testing.T, err error) bool {
	t.Helper()
	if err != nil && !errors.Is(err, ErrInvalidMetadata) && !errors.Is(err, ErrUnsupported) {
		t.Fatalf("error %v wraps no sentinel", err)
	}
	return err != nil
}

func FuzzParseArrayMetadata(f *testing.F) {
	addRefdataSeeds(f, "zarr.json", func(b []byte) { f.Add(b) })
	f.Add([]byte(validArray))
	f.Add([]byte(`{"zarr_format":3,"node_type":"array","shape":[],"data_type":"r8","chunk_grid":{"name":"regular","configuration":{"chunk_shape":[]}},"chunk_key_encoding":"v2","fill_value":[7],"codecs":["bytes"],"x":{"must_understand":false}}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		m, err := ParseArrayMetadata(doc)
		if parseFailed(t, err) {
			return
		}
		out, err := m.Marshal()
		if err != nil {
			t.Fatalf("Marshal of parsed metadata: %v", err)
		}
		m2, err := ParseArrayMetadata(out)
		if err != nil {
			t.Fatalf("re-parse: %v\n%s", err, out)
		}
		m.FillValueJSON, m2.FillValueJSON = nil, nil
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("round trip differs:\n%+v\n%+v", m, m2)
		}
		_ = m.GridShape()
		_ = m.ChunkKeyEncoding.Key(make([]int, m.NDim()))
	})
}

func FuzzParseGroupMetadata(f *testing.F) {
	addRefdataSeeds(f, "zarr.json", func(b []byte) { f.Add(b) })
	f.Fuzz(func(t *testing.T, doc []byte) {
		g, err := ParseGroupMetadata(doc)
		if parseFailed(t, err) {
			return
		}
		out, err := g.Marshal()
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		g2, err := ParseGroupMetadata(out)
		if err != nil || !reflect.DeepEqual(g, g2) {
			t.Fatalf("round trip: %v\n%+v\n%+v", err, g, g2)
		}
	})
}

func FuzzParseV2Metadata(f *testing.F) {
	addRefdataSeeds(f, ".zarray", func(b []byte) { f.Add(b, []byte(`{"a": [1, 2.5, null]}`)) })
	f.Add([]byte(validV2), []byte(nil))
	f.Fuzz(func(t *testing.T, zarray, zattrs []byte) {
		m, err := ParseArrayMetadataV2(zarray, zattrs)
		if parseFailed(t, err) {
			return
		}
		out, err := m.Marshal()
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		m2, err := ParseArrayMetadataV2(out, zattrs)
		if err != nil {
			t.Fatalf("re-parse: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(m.Shape, m2.Shape) || m.DataType != m2.DataType || m.Order != m2.Order ||
			len(m.Filters) != len(m2.Filters) || (m.FillValue == nil) != (m2.FillValue == nil) {
			t.Fatalf("round trip differs:\n%+v\n%+v", m, m2)
		}
		v3, err := m.ToV3()
		if err != nil {
			t.Fatalf("ToV3 of valid v2 metadata: %v", err)
		}
		if _, err := v3.Marshal(); err != nil {
			t.Fatalf("v3 Marshal: %v", err)
		}
	})
}
