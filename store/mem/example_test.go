package mem_test

import (
	"context"
	"fmt"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
)

func Example() {
	ctx := context.Background()
	s := mem.New()
	_ = s.Set(ctx, "arr/c/0/0", []byte("0123456789"))
	full, _ := s.Get(ctx, "arr/c/0/0", store.Full())
	tail, _ := s.Get(ctx, "arr/c/0/0", store.Suffix(4))
	past, _ := s.Get(ctx, "arr/c/0/0", store.OffsetLen(8, 100)) // clamped
	_, err := s.Get(ctx, "arr/c/0/1", store.Full())
	fmt.Printf("%s %s %s %v\n", full, tail, past, err)
	for k := range s.List(ctx, "arr/") {
		fmt.Println(k)
	}
	// Output:
	// 0123456789 6789 89 get "arr/c/0/1": key not found
	// arr/c/0/0
}
