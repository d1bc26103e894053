package cache

import (
	"os"
	"syscall"
)

// punchHole releases a file range's blocks to the file system, keeping the
// file's length (best effort: a file system without holes keeps them).
func punchHole(f fileIO, off, size int64) {
	if of, ok := f.(*os.File); ok {
		const punchHoleKeepSize = 0x02 | 0x01 // FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE
		syscall.Fallocate(int(of.Fd()), punchHoleKeepSize, off, size)
	}
}
