//go:build cblosc && !czstd

package main

import "log"

// zstdCompare needs libzstd (build with -tags cblosc,czstd).
func zstdCompare(size, rounds int, _ any) {
	log.Fatal("-zstd needs libzstd-dev and -tags cblosc,czstd")
}
