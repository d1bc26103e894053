package zarr_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// TestVLenArenaProbe is the probe of issue 24: metadata naming an arena
// in the vlen codec's configuration ("gozarr_arena", the field through
// which an earlier version bound its per-operation arena) must not open,
// let alone decode into the arena of another operation running at the
// same time. Plain and sharded (the vlen codec inside sharding_indexed).
func TestVLenArenaProbe(t *testing.T) {
	ctx := context.Background()
	st := mem.New()
	m, err := zarr.NewArrayMetadata([]int{8}, dtype.TypeVarString, []int{4})
	if err != nil {
		t.Fatal(err)
	}
	live, err := zarr.CreateArray(ctx, st, "live", m)
	if err != nil {
		t.Fatal(err)
	}
	if err := zarr.WriteStrings(ctx, live, []string{"a", "b", "c", "d", "e", "f", "g", "h"}); err != nil {
		t.Fatal(err)
	}
	// Keep string operations (each with an arena of its own) running.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, _, err := zarr.ReadStrings(ctx, live); err != nil {
				t.Error(err)
				return
			}
		}
	})
	defer func() { close(stop); wg.Wait() }()

	probe := `{"name":"vlen-utf8","configuration":{"gozarr_arena":1}}`
	for name, codecsJSON := range map[string]string{
		"plain":   `[` + probe + `]`,
		"sharded": `[{"name":"sharding_indexed","configuration":{"chunk_shape":[2],"codecs":[` + probe + `],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}]}}]`,
	} {
		t.Run(name, func(t *testing.T) {
			meta := `{"zarr_format":3,"node_type":"array","shape":[8],"data_type":"string",
				"chunk_grid":{"name":"regular","configuration":{"chunk_shape":[4]}},
				"chunk_key_encoding":{"name":"default","configuration":{"separator":"/"}},
				"fill_value":"","codecs":` + codecsJSON + `}`
			if err := st.Set(ctx, "probe/zarr.json", []byte(meta)); err != nil {
				t.Fatal(err)
			}
			// The chunk of the live array, copied: it would decode.
			chunk, err := st.Get(ctx, "live/c/0", store.Full())
			if err == nil {
				_ = st.Set(ctx, "probe/c/0", chunk)
			}
			a, err := zarr.OpenArray(ctx, st, "probe")
			if err == nil {
				_, _, rerr := zarr.ReadStrings(ctx, a)
				_, _, berr := a.ReadBytes(ctx)
				t.Fatalf("opened metadata naming an arena (strings: %v, bytes: %v)", rerr, berr)
			}
			if !errors.Is(err, codecs.ErrInvalidConfig) || !strings.Contains(err.Error(), `unknown field "gozarr_arena"`) {
				t.Fatalf("error %v, want ErrInvalidConfig naming the field", err)
			}
		})
	}
}
