package kerchunk_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/internal/arraytest"
	"github.com/gozarr/gozarr/store/kerchunk"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/virtual"
	"github.com/gozarr/gozarr/zarr"
)

// FuzzOpen opens arbitrary documents, then gets and locates every key and
// reads every small array they describe: errors, never a panic, a hang or
// an unbounded allocation. Targets resolve into a small memory store.
func FuzzOpen(f *testing.F) {
	arraytest.AddFiles(f, fixtures, "gen_v0.json", "gen_v1.json", "cf.json")
	f.Add([]byte(`{"version": 1, "templates": {"u": "d", "f": "{{c}}"}, "gen": [{"key": "g{{i}}", "url": "{{f(c=u)}}", "offset": "{{(i + 1) * 3 % 7}}", "length": "2", "dimensions": {"i": {"start": 1, "stop": 9, "step": 2}}}], "refs": {"k": "base64:AAE="}}`))
	f.Add([]byte(`{"a/.zarray": {"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<i2", "compressor": null, "fill_value": 0, "order": "C", "filters": null}, "a/0": ["d", 0, 4], "a/1": ["d"]}`))
	target := mem.New()
	target.Set(context.Background(), "d", []byte("0123456789abcdef"))
	op := func(context.Context, string) (store.Reader, error) { return target, nil }
	f.Fuzz(func(t *testing.T, doc []byte) {
		ctx := context.Background()
		st := mem.New()
		st.Set(ctx, "refs.json", doc)
		st.Set(ctx, "d", []byte("0123456789abcdef"))
		ks, err := kerchunk.Open(ctx, st, "refs.json", kerchunk.WithMaxKeys(1<<12), kerchunk.WithMaxSize(1<<20),
			kerchunk.Allow("s3://b"), kerchunk.WithResolverOptions(virtual.WithOpener(op)))
		if err != nil {
			return
		}
		for _, k := range ks.Keys() {
			ks.Get(ctx, k, store.Full())
			ks.Locate(ctx, k)
			if p, ok := strings.CutSuffix(k, "/.zarray"); ok {
				a, err := zarr.OpenArray(ctx, ks, p)
				if err != nil {
					continue
				}
				n := 1
				for _, s := range a.Shape() {
					n *= s
				}
				if n <= 1<<12 {
					a.ReadBytes(ctx)
				}
			}
		}
	})
}
