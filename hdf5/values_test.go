package hdf5

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/kerchunk"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// refsStore materialises kerchunk references into a memory store: each
// [url, offset, length] reference becomes the bytes it names in the file.
func refsStore(t *testing.T, refs *Refs, file string) *mem.Store {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	st := mem.New()
	ctx := context.Background()
	for k, v := range refs.Refs {
		var b []byte
		switch x := v.(type) {
		case string:
			if strings.HasPrefix(x, "base64:") {
				b, err = base64.StdEncoding.DecodeString(x[len("base64:"):])
				if err != nil {
					t.Fatal(err)
				}
			} else {
				b = []byte(x)
			}
		case ChunkRef:
			if x.URL != file {
				t.Fatalf("%s: reference to %v, want %s", k, x.URL, file)
			}
			b = data[x.Offset : x.Offset+x.Length]
		default:
			t.Fatalf("%s: value of type %T", k, v)
		}
		if err := st.Set(ctx, k, b); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// TestValuesThroughReferences reads every dataset of the reference files
// through the references References makes (Zarr v2 metadata, chunks at the
// addresses it found, decoded by gozarr's codecs) and compares the values
// with h5py's.
func TestValuesThroughReferences(t *testing.T) {
	ctx := context.Background()
	for name, ef := range loadExpected(t) {
		t.Run(name, func(t *testing.T) {
			f := openTestFile(t, name)
			refs, err := References(ctx, f, RefsOptions{SkipUnsupported: true})
			if err != nil {
				t.Fatal(err)
			}
			// Refused: compound and variable-length data, and chunks whose
			// filter masks differ (Zarr metadata has one pipeline).
			skipped := map[string]bool{}
			for _, s := range refs.Skipped {
				p, _, _ := strings.Cut(s, ": ")
				skipped[p] = true
				if !strings.Contains(s, "unsupported") {
					t.Errorf("skipped %s", s)
				}
			}
			for p, want := range ef.Datasets {
				refuse := strings.HasPrefix(want.DType, "|V") || strings.HasPrefix(want.DType, "|O") || mixedMasks(want) && !strings.Contains(p, "szip")
				if refuse != skipped[p] {
					t.Errorf("%s: skipped %v, want %v (%v)", p, skipped[p], refuse, refs.Skipped)
				}
			}
			// Read twice: from the references materialised in memory, and
			// through store/kerchunk reading the JSON WriteJSON wrote, its
			// targets resolved in testdata/ (the one allowed prefix).
			var doc bytes.Buffer
			if err := refs.WriteJSON(&doc); err != nil {
				t.Fatal(err)
			}
			abs, err := filepath.Abs(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			m := mem.New()
			json := bytes.ReplaceAll(doc.Bytes(), []byte(`["`+name+`",`), []byte(`["`+abs+`",`))
			if err := m.Set(ctx, "refs.json", json); err != nil {
				t.Fatal(err)
			}
			ks, err := kerchunk.Open(ctx, m, "refs.json", kerchunk.Allow(filepath.Dir(abs)))
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range []store.Reader{refsStore(t, refs, name), ks} {
				checkValues(t, ctx, st, ef, skipped)
			}
		})
	}
}

// mixedMasks reports whether h5py's chunk_info gives the chunks of a
// dataset different filter masks (szip, an optional filter, leaves chunks
// it cannot shrink raw: szip_f4).
func mixedMasks(ds *expectedDataset) bool {
	masks := map[string]bool{}
	for _, r := range ds.ChunkInfo {
		if len(r) > 1 {
			masks[string(r[1])] = true
		}
	}
	return len(masks) > 1
}

// checkValues reads every dataset of ef from st (a Zarr v2 hierarchy) and
// compares its values with h5py's.
func checkValues(t *testing.T, ctx context.Context, st store.Reader, ef *expectedFile, skipped map[string]bool) {
	t.Helper()
	checked := 0
	for p, want := range ef.Datasets {
		key := strings.TrimPrefix(p, "/")
		if skipped[p] {
			continue
		}
		if _, err := st.Get(ctx, key+"/.zarray", store.Full()); err != nil {
			if !want.IsScale {
				t.Errorf("%s: no .zarray: %v", p, err)
			}
			continue
		}
		arr, err := zarr.OpenArray(ctx, st, key)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		got, _, err := arr.ReadBytes(ctx)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		exp, err := npy.ReadFile(filepath.Join("testdata", "values", want.Values))
		if err != nil {
			t.Fatal(err)
		}
		wantBytes := nativeOrder(exp)
		if !bytes.Equal(got, wantBytes) {
			t.Errorf("%s: values differ from h5py's (%d bytes, want %d)", p, len(got), len(wantBytes))
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no dataset checked")
	}
	t.Logf("%d datasets equal h5py's", checked)
}

// TestReferencesRoot: references to a group's subtree have the group as
// their root; a dataset or a missing path as Root is ErrNotFound.
func TestReferencesRoot(t *testing.T) {
	ctx := context.Background()
	f := openTestFile(t, "earliest.h5")
	refs, err := References(ctx, f, RefsOptions{Root: "/sub"})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range refs.Refs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	want := []string{".zattrs", ".zgroup", "deeper/.zattrs", "deeper/.zgroup", "deeper/u1/.zarray", "deeper/u1/.zattrs",
		"deeper/u1/0.0", "deeper/u1/0.1", "deeper/u1/0.2", "deeper/u1/0.3"}
	if !reflect.DeepEqual(keys, want) {
		t.Fatalf("keys %v, want %v", keys, want)
	}
	for _, root := range []string{"/sub/deeper/u1", "/nothing"} {
		if _, err := References(ctx, f, RefsOptions{Root: root}); !errors.Is(err, ErrNotFound) {
			t.Errorf("Root %s: %v, want ErrNotFound", root, err)
		}
	}
}

// TestWriteJSON: the document WriteJSON writes is the JSON of Refs.
func TestWriteJSON(t *testing.T) {
	refs, err := References(context.Background(), openTestFile(t, "cf.nc"), RefsOptions{URL: "s3://b/\"odd\" <name>\u00e9.nc"})
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	if err := refs.WriteJSON(&sb); err != nil {
		t.Fatal(err)
	}
	var got, want any
	if err := json.Unmarshal([]byte(sb.String()), &got); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(map[string]any{"version": 1, "refs": refs.Refs})
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("WriteJSON wrote\n%s\nwant\n%s", sb.String(), b)
	}
	if r := got.(map[string]any)["refs"].(map[string]any)["temp/0.0.0"].([]any); r[0] != "s3://b/\"odd\" <name>\u00e9.nc" {
		t.Fatalf("URL %q", r[0])
	}
}

// nativeOrder returns the data of a .npy array in little-endian order.
func nativeOrder(a *npy.Array) []byte {
	if !strings.HasPrefix(a.Descr, ">") {
		return a.Data
	}
	n, _ := npy.ItemSize(a.Descr)
	out := append([]byte(nil), a.Data...)
	for i := 0; i+n <= len(out); i += n {
		for j := 0; j < n/2; j++ {
			out[i+j], out[i+n-1-j] = out[i+n-1-j], out[i+j]
		}
	}
	return out
}

// TestSzipSkipped: szip skipped for some chunks (szip_raw.h5). The raw
// chunks are references read by the codec's "optional" rule, the raw
// chunk that starts with the bytes of a size header is written re-coded
// inline, and with fletcher32 after szip that chunk is refused.
func TestSzipSkipped(t *testing.T) {
	refs, err := References(context.Background(), openTestFile(t, "szip_raw.h5"), RefsOptions{SkipUnsupported: true})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := refs.Refs["szip_raw_i4/0.0"].(string); !ok || !strings.HasPrefix(v, "base64:") {
		t.Errorf("the ambiguous raw chunk: %T, want an inline value", refs.Refs["szip_raw_i4/0.0"])
	}
	for _, k := range []string{"szip_raw_i4/1.0", "szip_raw_i4/2.0", "szip_fletcher/0.0"} {
		if _, ok := refs.Refs[k].(ChunkRef); !ok {
			t.Errorf("%s: %T, want a reference", k, refs.Refs[k])
		}
	}
	if !strings.Contains(refs.Refs["szip_raw_i4/.zarray"].(string), `"optional":true`) {
		t.Errorf("szip_raw_i4's codec is not optional: %s", refs.Refs["szip_raw_i4/.zarray"])
	}
	if len(refs.Skipped) != 1 || !strings.HasPrefix(refs.Skipped[0], "/ambiguous_fletcher: ") || !strings.Contains(refs.Skipped[0], "size header") {
		t.Errorf("skipped %q, want /ambiguous_fletcher", refs.Skipped)
	}
	// Masks that differ in a filter other than szip stay refused.
	refs, err = References(context.Background(), openTestFile(t, "filters.h5"), RefsOptions{SkipUnsupported: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(refs.Skipped, func(s string) bool {
		return strings.HasPrefix(s, "/masked_mixed: ") && strings.Contains(s, "filter masks")
	}) {
		t.Errorf("masked_mixed not refused: %q", refs.Skipped)
	}
}
