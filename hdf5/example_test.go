package hdf5_test

import (
	"context"
	"fmt"
	"log"

	"github.com/gozarr/gozarr/hdf5"
	"github.com/gozarr/gozarr/store/fs"
)

// Open an HDF5 file through a store, list its datasets with their chunk
// index, and write kerchunk references to it.
func Example() {
	ctx := context.Background()
	st, err := fs.New("testdata", fs.ReadOnly())
	if err != nil {
		log.Fatal(err)
	}
	f, err := hdf5.Open(ctx, st, "cf.nc")
	if err != nil {
		log.Fatal(err)
	}
	err = f.Walk(ctx, func(n *hdf5.Node) error {
		if ds := n.Dataset; ds != nil && ds.Layout == hdf5.Chunked {
			chunks := 0
			if err := ds.Chunks(ctx, func(hdf5.Chunk) error { chunks++; return nil }); err != nil {
				return err
			}
			fmt.Println(n.Path, ds.Shape, ds.ChunkShape, ds.Index, chunks, "chunks, dims", ds.Dims)
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	refs, err := hdf5.References(ctx, f, hdf5.RefsOptions{URL: "cf.nc"})
	if err != nil {
		log.Fatal(err)
	}
	// refs.WriteJSON(w) writes the whole kerchunk JSON document.
	fmt.Println(refs.Refs["temp/0.0.0"])
	fmt.Println(refs.Refs["temp/.zarray"])
	fmt.Println(refs.Refs["temp/.zattrs"])
	// Output:
	// /temp [5 6 8] [2 3 4] btree-v1 12 chunks, dims [/time /lat /lon]
	// /time [5] [512] btree-v1 1 chunks, dims []
	// {cf.nc 17742 47}
	// {"chunks":[2,3,4],"compressor":null,"dtype":"<f4","fill_value":-999,"filters":[{"elementsize":4,"id":"shuffle"},{"id":"zlib","level":3}],"order":"C","shape":[5,6,8],"zarr_format":2}
	// {"_ARRAY_DIMENSIONS":["time","lat","lon"],"long_name":"air temperature","scale_factor":0.5,"units":"K"}
}
