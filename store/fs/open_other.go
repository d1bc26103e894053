//go:build !unix

package fs

import "os"

// readFlags open a value for reading.
const readFlags = os.O_RDONLY

// dirFlags open a directory for listing.
const dirFlags = os.O_RDONLY
