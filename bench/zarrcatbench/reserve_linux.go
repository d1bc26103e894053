package main

import (
	"os"
	"syscall"
)

// reserve allocates n bytes for f, its size unchanged, as zarrcat get does
// for an output file (fallocate with FALLOC_FL_KEEP_SIZE); best effort.
func reserve(f *os.File, n int64) { syscall.Fallocate(int(f.Fd()), 1, 0, n) }
