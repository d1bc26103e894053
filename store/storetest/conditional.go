package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store"
)

// TestConditionalReader checks the store.ConditionalReader cr, whose data
// st writes (the same store, or a store under a reader of it): current
// returns the condition naming a key's current version (its ETag and
// last-modified time, as the backend reports them). Reads of every form
// (bounded, from, suffix, whole, empty) under the current version's ETag,
// time, or both, give the value's bytes, the ETag with or without its
// quotes; a time before the write, and the old ETag once the value is
// rewritten, are store.ErrChanged with no bytes; a missing key is
// store.ErrNotFound; a zero condition reads as Get.
func TestConditionalReader(t *testing.T, st store.Writer, cr store.ConditionalReader, current func(ctx context.Context, key string) (store.ReadCondition, error)) {
	ctx := context.Background()
	key := "cond/" + strings.ReplaceAll(t.Name(), "/", "_")
	value := "hello world"
	if err := st.Set(ctx, key, []byte(value)); err != nil {
		t.Fatal(err)
	}
	c, err := current(ctx, key)
	if err != nil || c.IsZero() {
		t.Fatalf("current version of %s: %v, %v", key, c, err)
	}
	forms := []struct {
		r    store.ByteRange
		want string
	}{
		{store.OffsetLen(6, 5), "world"}, {store.From(6), "world"}, {store.Suffix(5), "world"},
		{store.Full(), value}, {store.OffsetLen(3, 0), ""}, {store.OffsetLen(100, 4), ""},
	}
	var conds []store.ReadCondition
	if c.ETag != "" {
		conds = append(conds, store.ReadCondition{ETag: c.ETag}, store.ReadCondition{ETag: strings.Trim(c.ETag, `"`)})
	}
	if !c.LastModified.IsZero() {
		conds = append(conds, store.ReadCondition{LastModified: c.LastModified},
			store.ReadCondition{LastModified: c.LastModified.Add(time.Hour)})
	}
	conds = append(conds, c, store.ReadCondition{})
	for _, cond := range conds {
		for _, f := range forms {
			got, err := cr.GetIf(ctx, key, f.r, cond)
			if err != nil || string(got) != f.want || got == nil {
				t.Errorf("GetIf(%v, %s) of the current version = %q, %v, want %q", f.r, cond, got, err, f.want)
			}
		}
	}
	if _, err := cr.GetIf(ctx, key+"-missing", store.OffsetLen(0, 4), c); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetIf of a missing key: %v, want ErrNotFound", err)
	}
	changed := func(what string, cond store.ReadCondition) {
		t.Helper()
		for _, f := range forms {
			got, err := cr.GetIf(ctx, key, f.r, cond)
			if !errors.Is(err, store.ErrChanged) || got != nil {
				t.Errorf("GetIf(%v, %s), %s: %q, %v, want ErrChanged", f.r, cond, what, got, err)
			}
		}
	}
	if !c.LastModified.IsZero() {
		changed("a time before the write", store.ReadCondition{LastModified: c.LastModified.Add(-2 * time.Second)})
	}
	if err := st.Set(ctx, key, []byte("HELLO WORLD!")); err != nil {
		t.Fatal(err)
	}
	if c.ETag != "" {
		changed("the value rewritten", store.ReadCondition{ETag: c.ETag})
	}
	if err := st.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
}
