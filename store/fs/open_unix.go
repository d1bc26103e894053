//go:build unix

package fs

import (
	"os"
	"syscall"
)

// readFlags open a value for reading without ever blocking (a FIFO with no
// writer would block a plain open forever) or acquiring a terminal.
const readFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY

// dirFlags open a directory for listing, and nothing else.
const dirFlags = readFlags | syscall.O_DIRECTORY
