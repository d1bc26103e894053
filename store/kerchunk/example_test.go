package kerchunk_test

import (
	"context"
	"fmt"

	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/kerchunk"
	"github.com/gozarr/gozarr/zarr"
)

// Open a references file beside the HDF5 file it points to and read a
// variable through it as a Zarr array.
func Example() {
	ctx := context.Background()
	dir, err := fs.New("../../testdata/virtual", fs.ReadOnly())
	if err != nil {
		panic(err)
	}
	refs, err := kerchunk.Open(ctx, dir, "cf.json")
	if err != nil {
		panic(err)
	}
	a, err := zarr.OpenArray(ctx, refs, "temp")
	if err != nil {
		panic(err)
	}
	fmt.Println(a.Shape(), a.Chunks(), a.Attributes()["units"])
	// Output: [6 9] [4 5] K
}
