// Package fuzzmin bounds how long go test -fuzz minimizes the inputs it
// finds, for the test binaries of packages whose fuzz targets take
// whole files (HDF5 files, Parquet refs files) as seeds.
//
// go test -fuzz minimizes every input that finds new coverage (not only
// failing ones) for up to -test.fuzzminimizetime, 60 s by default, and
// every minimization run snapshots all coverage counters. With inputs of
// kilobytes and a large instrumented program (parquet-go, the HDF5
// reader) a worker spent its whole time minimizing, so fuzzing ran at 0
// execs/s for minutes (FuzzRefsFile, hdf5's FuzzOpen). Main sets
// minimization to 1000 runs an input, unless the command line sets
// -test.fuzzminimizetime.
package fuzzmin

import (
	"flag"
	"os"
	"testing"
)

// Runs is the minimization bound Main sets: runs of the fuzz function
// per input.
const Runs = "1000x"

// Main is a TestMain: it parses the flags, bounds minimization unless
// -test.fuzzminimizetime was given, and runs the tests.
func Main(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.fuzzminimizetime" })
	if !set {
		if err := flag.Set("test.fuzzminimizetime", Runs); err != nil {
			panic(err) // the testing package defines the flag
		}
	}
	os.Exit(m.Run())
}
