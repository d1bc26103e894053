package zarr

// The codecs every array may name register themselves when their package
// is loaded: the core codecs live in package codecs, sharding_indexed in
// package sharding (imported by array.go), and blosc here.
import _ "github.com/gozarr/gozarr/codecs/blosc"
