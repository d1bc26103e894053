package virtual_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/virtual"
)

// FuzzCheck resolves arbitrary URLs against a fixed allow-list: no panic,
// and whatever resolves lands on a valid key of an allowed store.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"x.nc", "../x", "/srv/refs/a/b", "file:///srv/refs/%2e%2e/x", "s3://bucket/data/f.nc",
		"s3://bucket/data/../x", "http://127.0.0.1:8080/pub/x", "http://[::1]/pub/x", "HTTP://127.0.0.1:8080/pub/a%2Fb"} {
		f.Add(s)
	}
	base := mem.New()
	op := func(context.Context, string) (store.Reader, error) { return mem.New(), nil }
	r, err := virtual.New(virtual.WithBase("/srv/refs", base, "p/"), virtual.Allow("s3://bucket/data", "http://127.0.0.1:8080/pub"), virtual.WithOpener(op))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, u string) {
		err := r.Check(u)
		if err != nil {
			if !errors.Is(err, virtual.ErrNotAllowed) && !errors.Is(err, virtual.ErrInvalidRef) {
				t.Fatalf("%q: %v", u, err)
			}
			return
		}
		st, key, err := r.Target(context.Background(), u, virtual.Checksum{})
		if err != nil {
			t.Fatalf("%q: checked, then %v", u, err)
		}
		if err := store.ValidateKey(key); err != nil {
			t.Fatalf("%q resolved to key %q: %v", u, key, err)
		}
		if st == base && !strings.HasPrefix(key, "p/") {
			t.Fatalf("%q resolved to %q outside the base prefix", u, key)
		}
	})
}
