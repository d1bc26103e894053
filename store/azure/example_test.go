package azure_test

import (
	"context"
	"fmt"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/azure"
)

// Open a container prefix and read a range (not run: it needs Azure or
// Azurite; without options, Open takes credentials from the environment
// or the default credential chain).
func ExampleOpen() {
	ctx := context.Background()
	st, err := azure.Open(ctx, "myaccount", "mycontainer", "data/image.zarr",
		azure.WithConnectionString("UseDevelopmentStorage=true"))
	if err != nil {
		fmt.Println(err)
		return
	}
	b, err := st.Get(ctx, "c/0/0", store.OffsetLen(0, 1024))
	fmt.Println(len(b), err)
}
