package hdf5

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/kerchunk"
	"github.com/gozarr/gozarr/zarr"
)

// kerchunkVerdict is what make_kerchunk.py found kerchunk does with a
// dataset: Status "ok", "refused" (left out) or "wrong" (its references
// do not give h5py's values), Why, and Strings, h5py's values of a
// variable-length string dataset.
type kerchunkVerdict struct {
	Status, Why string
	Strings     []string
}

// kerchunkReport is testdata/kerchunk/report.json (make_kerchunk.py): per
// reference file and dataset, kerchunk's verdict.
func kerchunkReport(t testing.TB) map[string]map[string]kerchunkVerdict {
	t.Helper()
	b, err := os.ReadFile("testdata/kerchunk/report.json")
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]map[string]kerchunkVerdict
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestKerchunkOwnJSON reads every reference file through the references
// kerchunk itself made (SingleHdf5ToZarr, testdata/kerchunk/NAME.json):
// every dataset kerchunk describes equals h5py's values (strings through
// the string API), but for the ones make_kerchunk.py found kerchunk gets
// wrong (compact data not written, an HDF5 bug in chunk offsets); the
// ones it leaves out (szip, lzf, lz4, bitshuffle, fletcher32, mixed masks,
// compound) have no .zarray.
func TestKerchunkOwnJSON(t *testing.T) {
	ctx := context.Background()
	abs, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	st, err := fs.New("testdata", fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	report := kerchunkReport(t)
	for name, ef := range loadExpected(t) {
		t.Run(name, func(t *testing.T) {
			rep, ok := report[name]
			if !ok {
				t.Fatalf("no kerchunk references for %s: rerun make_kerchunk.py", name)
			}
			key := "kerchunk/" + strings.TrimSuffix(name, filepath.Ext(name)) + ".json"
			ks, err := kerchunk.Open(ctx, st, key, kerchunk.WithLocation(abs), kerchunk.Allow(abs))
			if err != nil {
				t.Fatal(err)
			}
			skipped := map[string]bool{}
			for p := range ef.Datasets {
				r, ok := rep[p]
				switch {
				case !ok:
					t.Errorf("%s: not in report.json", p)
				case r.Status == "refused":
					if _, err := ks.Get(ctx, strings.TrimPrefix(p, "/")+"/.zarray", store.Full()); err == nil {
						t.Errorf("%s: kerchunk refused it (%s), yet wrote a .zarray", p, r.Why)
					}
				case r.Strings != nil:
					a, err := zarr.OpenArray(ctx, ks, strings.TrimPrefix(p, "/"))
					if err != nil {
						t.Errorf("%s: %v", p, err)
						break
					}
					got, _, err := zarr.ReadStrings(ctx, a)
					if err != nil || !slices.Equal(got, r.Strings) {
						t.Errorf("%s: %q, %v; h5py %q", p, got, err, r.Strings)
					}
				}
				if r.Status != "ok" || r.Strings != nil {
					skipped[p] = true
				}
			}
			if len(skipped) < len(ef.Datasets) { // szip_raw.h5: all refused
				checkValues(t, ctx, ks, ef, skipped)
			}
		})
	}
}
