module github.com/gozarr/gozarr/codecs/zstdc

go 1.26.0

require (
	github.com/DataDog/zstd v1.5.7
	github.com/gozarr/gozarr v0.0.0-00010101000000-000000000000
	github.com/klauspost/compress v1.20.4
)

require (
	github.com/pierrec/lz4/v4 v4.1.33 // indirect
	github.com/ulikunitz/xz v0.5.15 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)

replace github.com/gozarr/gozarr => ../..
