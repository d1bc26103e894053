package zarr

// The codecs every array may name register themselves when their package
// is loaded: the core codecs live in package codecs, sharding_indexed in
// package sharding (imported by array.go), blosc, pcodec, zfp and the
// numcodecs codecs of Zarr v2 arrays here.
import (
	_ "github.com/gozarr/gozarr/codecs/blosc"
	_ "github.com/gozarr/gozarr/codecs/numcodecs"
	_ "github.com/gozarr/gozarr/codecs/pcodec"
	_ "github.com/gozarr/gozarr/codecs/zfp"
)
