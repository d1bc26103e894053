package store_test

import (
	"fmt"

	"github.com/gozarr/gozarr/store"
)

func ExampleCoalesce() {
	// Three inner chunks of a shard, asked for out of order; the last is
	// far from the others.
	spans := []store.Span{{Offset: 1000, Length: 100}, {Offset: 0, Length: 100}, {Offset: 1 << 20, Length: 50}}
	groups, _ := store.Coalesce(spans, store.CoalesceOptions{MaxGap: 4096})
	for _, g := range groups {
		fmt.Println(g.Span, g.Members)
	}
	// Output:
	// {0 1100} [1 0]
	// {1048576 50} [2]
}
