package storeurl_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/storeurl"
)

func TestRegister(t *testing.T) {
	ctx := context.Background()
	var got []string
	opener := func(st store.Reader) storeurl.Opener {
		return func(_ context.Context, location string) (store.Reader, error) {
			got = append(got, location)
			return st, nil
		}
	}
	a, b := mem.New(), mem.New()
	if err := storeurl.Register("Xtest", opener(a)); err != nil {
		t.Fatal(err)
	}
	if err := storeurl.RegisterHost("blob.example.net", opener(b)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		loc  string
		want store.Reader
	}{
		{"xtest://bucket/p", a},
		{"XTEST://other", a},
		{"https://acct.blob.example.net/c/p", b},
		{"http://blob.example.net/c", b},
	} {
		st, err := storeurl.Open(ctx, tc.loc)
		if err != nil || st != tc.want {
			t.Errorf("Open(%q) = %v, %v; want the registered store", tc.loc, st, err)
		}
		if loc, err := storeurl.Parse(tc.loc); err != nil || loc.URL != tc.loc {
			t.Errorf("Parse(%q) = %+v, %v", tc.loc, loc, err)
		}
	}
	if len(got) != 4 {
		t.Errorf("openers called with %q", got)
	}
	// Other hosts stay with the HTTP store; unknown schemes stay unsupported.
	if st, err := storeurl.Open(ctx, "https://blob.example.net.evil.org/c"); err != nil || st == b {
		t.Errorf("Open of a look-alike host = %v, %v; want the HTTP store", st, err)
	}
	if _, err := storeurl.Open(ctx, "ytest://x"); !errors.Is(err, storeurl.ErrUnsupported) {
		t.Errorf("Open(ytest://x): err = %v, want ErrUnsupported", err)
	}
	for _, bad := range []string{"s3", "file", "https", "memory", "", "a b", "1x"} {
		if err := storeurl.Register(bad, opener(a)); err == nil {
			t.Errorf("Register(%q): no error", bad)
		}
	}
	for _, bad := range []string{"", "a/b", "host:80"} {
		if err := storeurl.RegisterHost(bad, opener(a)); err == nil {
			t.Errorf("RegisterHost(%q): no error", bad)
		}
	}
}
