package icechunk_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/icechunk"
	"github.com/gozarr/gozarr/store/internal/arraytest"
	"github.com/gozarr/gozarr/zarr"
)

// TestForkMerge: two sessions at one base write different chunks of i4
// (one native, one inline), export their refs; a third session at the
// base imports both and commits once: one new snapshot whose parent is the
// base, both writes in it, the rest of i4 as it was. Overlapping imports
// and a session that changed metadata are refused.
func TestForkMerge(t *testing.T) {
	ctx := context.Background()
	for _, spec := range []string{"spec1", "spec2"} {
		dir, r := fixtureCopy(t, spec)
		base, err := r.Resolve(ctx, "main")
		if err != nil {
			t.Fatal(err)
		}
		before := readI4(t, r, base)
		var docs [][]byte
		for w, row := range []int{0, 9} {
			s, err := r.SessionAt(ctx, "main", base, icechunk.WithInlineThreshold(4096*w))
			if err != nil {
				t.Fatal(err)
			}
			arraytest.Write(t, arraytest.Open(t, s, "i4"), bytes.Repeat([]byte{byte(50 + w)}, 4*5), nd.Range(row, row+1), nd.Range(0, 5))
			doc, err := s.ExportChanges()
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, doc)
		}
		m, err := r.SessionAt(ctx, "main", base)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			if err := m.ImportChanges(d); err != nil {
				t.Fatal(err)
			}
		}
		if err := m.ImportChanges(docs[0]); !errors.Is(err, icechunk.ErrConflict) {
			t.Errorf("%s: importing a chunk twice: %v, want ErrConflict", spec, err)
		}
		id, err := m.Commit(ctx, "merged", nil)
		if err != nil {
			t.Fatal(err)
		}
		r2 := openRepo(t, dir)
		anc, err := r2.Ancestry(ctx, id)
		if err != nil || anc[1].ID != base {
			t.Fatalf("%s: the merged commit's parent %v, want the base %v (%v)", spec, anc[1].ID, base, err)
		}
		after := readI4(t, r2, id)
		for i := range after {
			row, col := i/4/12, i/4%12
			want := before[i]
			if col < 5 && row == 0 {
				want = 50
			} else if col < 5 && row == 9 {
				want = 51
			}
			if after[i] != want {
				t.Fatalf("%s: i4 byte %d (%d, %d) = %d, want %d", spec, i, row, col, after[i], want)
			}
		}
		// a forked session that changes metadata cannot be exported
		s, err := r2.SessionAt(ctx, "main", id)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := zarr.CreateGroup(ctx, s, "newgroup", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ExportChanges(); !errors.Is(err, icechunk.ErrUnsupported) {
			t.Errorf("%s: exporting a metadata change: %v, want ErrUnsupported", spec, err)
		}
		// changes from another base are refused
		if err := s.ImportChanges(docs[1]); !errors.Is(err, icechunk.ErrConflict) {
			t.Errorf("%s: importing changes of another base: %v", spec, err)
		}
	}
}

func readI4(t *testing.T, r *icechunk.Repository, id icechunk.ID) []byte {
	t.Helper()
	return arraytest.Read(t, checkout(t, r, id), "i4")
}
