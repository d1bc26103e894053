package parquet_test

import (
	"testing"

	"github.com/gozarr/gozarr/internal/fuzzmin"
)

// TestMain bounds the minimization of new fuzz inputs (see fuzzmin: with
// parquet-go's coverage, go test -fuzz FuzzRefsFile ran at 0 execs/s).
func TestMain(m *testing.M) { fuzzmin.Main(m) }
