package parquet_test

import (
	"flag"
	"os"
	"testing"
)

// TestMain bounds the minimization of new fuzz inputs unless
// -test.fuzzminimizetime is given: go test -fuzz minimizes every input
// that finds new coverage for up to 60 s, and with parquet-go's coverage
// (every run snapshots its counters) each such minimization took the
// worker's whole time, so `go test -fuzz FuzzRefsFile` ran at 0 execs/s
// for minutes. 1000 runs per input keep minimization, and the rate at
// thousands of execs/s.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.fuzzminimizetime" })
	if !set {
		flag.Set("test.fuzzminimizetime", "1000x")
	}
	os.Exit(m.Run())
}
