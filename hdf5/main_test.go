package hdf5

import (
	"testing"

	"github.com/gozarr/gozarr/internal/fuzzmin"
)

// TestMain bounds the minimization of new fuzz inputs (see fuzzmin: with
// whole HDF5 files as seeds, go test -fuzz FuzzOpen ran at 0 execs/s).
func TestMain(m *testing.M) { fuzzmin.Main(m) }
