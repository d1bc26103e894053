package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestMain runs a child job when the bench (here, the test binary) starts
// itself as one.
func TestMain(m *testing.M) {
	if j := os.Getenv(childEnv); j != "" {
		if err := child(j, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestTiny runs the whole bench on a 4 MiB array, locally, one run each.
func TestTiny(t *testing.T) {
	var out bytes.Buffer
	err := run([]string{"-size", "4MiB", "-cols", "1024", "-inner-cols", "512", "-batch", "64", "-k", "2",
		"-budget", "16MiB", "-reps", "1", "-s3", "off", "-python", "off", "-dir", t.TempDir()}, &out)
	if err != nil {
		t.Fatal(err)
	}
	rep := out.String()
	for _, want := range []string{"| local | sequential | 1024 |", "| local | block-shuffle | 1024 |",
		"| local | chunk-shuffle | 1024 |", "| local | permutation | 256 |", "block-shuffle ÷ sequential, local"} {
		if !strings.Contains(rep, want) {
			t.Errorf("report lacks %q:\n%s", want, rep)
		}
	}
	if !strings.Contains(rep, "| 1.000 |") {
		t.Errorf("no amplification of 1 in:\n%s", rep)
	}
}

func TestParseSize(t *testing.T) {
	for s, want := range map[string]int64{"4096": 4096, "2KiB": 2048, "1.5MiB": 3 << 19, "1GiB": 1 << 30} {
		if got, err := parseSize(s); err != nil || got != want {
			t.Errorf("%s: %d, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "x", "-1MiB", "0"} {
		if _, err := parseSize(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}
