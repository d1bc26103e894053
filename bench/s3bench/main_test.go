package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

// TestRunFake runs the whole benchmark on a small array against the
// in-process gofakes3 server: every workload must read back what was
// written (run fails otherwise) and the table must show the expected
// request counts.
func TestRunFake(t *testing.T) {
	cfg, err := parseFlags([]string{"-server", "fake", "-n", "256", "-shard", "128", "-inner", "64",
		"-random", "5", "-reps", "1", "-latency", "0,1ms", "-conc", "4"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), cfg, &out); err != nil {
		t.Fatal(err)
	}
	report := out.String()
	// 4 shards of 4 inner chunks: "all" and "shard" fetch whole shards, the
	// random chunks cost one index GET per shard they touch plus one GET
	// each, the probe 5 GETs.
	for _, want := range []string{
		"| gofakes3 | 0s | 4 | all | 4 | 0/0/4 |",
		"| gofakes3 | 1ms | 4 | shard | 1 | 0/0/1 |",
		"| gofakes3 | 0s | 4 | probe | 5 | 0/5/0 |",
		"wrote s3://s3bench/",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	for _, line := range strings.Split(report, "\n") {
		if strings.Contains(line, "| random |") && !strings.Contains(line, "/5/0 |") {
			t.Errorf("random row without 5 ranged GETs: %s", line)
		}
	}
}

func TestFloor(t *testing.T) {
	for _, c := range []struct {
		requests, conc int
		lat, want      time.Duration
	}{
		{16, 16, 20 * time.Millisecond, 20 * time.Millisecond},
		{17, 16, 20 * time.Millisecond, 40 * time.Millisecond},
		{216, 64, 20 * time.Millisecond, 80 * time.Millisecond},
		{216, 16, 20 * time.Millisecond, 280 * time.Millisecond},
		{1, 64, 0, 0},
	} {
		r := result{requests: c.requests, conc: c.conc, latency: c.lat}
		if got := r.floor(); got != c.want {
			t.Errorf("floor(%d requests, conc %d, %v) = %v, want %v", c.requests, c.conc, c.lat, got, c.want)
		}
	}
}

func TestParseFlagsErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-shard", "100", "-inner", "64"},
		{"-n", "512", "-shard", "1024"},
		{"-latency", "soon"},
		{"-conc", "0"},
		{"-workloads", "all,everything"},
		{"-server", "cloud"},
		{"-reps", "0"},
		{"extra"},
	} {
		if _, err := parseFlags(append([]string{"-server", "fake"}, args...)); err == nil {
			t.Errorf("parseFlags(%q) succeeded", args)
		}
	}
}

func TestFieldDeterministic(t *testing.T) {
	a, b := field(7, 64), field(7, 64)
	if !bytes.Equal(a, b) {
		t.Fatal("field differs between two calls with the same seed")
	}
	if bytes.Equal(a, field(8, 64)) {
		t.Fatal("field ignores the seed")
	}
	for i := 0; i < len(a); i += 4 {
		v := float64(math.Float32frombits(binary.LittleEndian.Uint32(a[i:])))
		if math.Abs(v) > 111 || v*64 != math.Round(v*64) {
			t.Fatalf("element %d = %v: outside ±111 or not a multiple of 1/64", i/4, v)
		}
	}
}

func TestProcCPU(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	if _, ok := procCPU(os.Getpid()); !ok {
		t.Fatal("procCPU of this process failed")
	}
	if _, ok := procCPU(0); ok {
		t.Fatal("procCPU(0) succeeded")
	}
}

func TestVerifyCatchesMismatch(t *testing.T) {
	cfg := config{n: 64, shard: 32, inner: 16, seed: 1, random: 3}
	data := field(1, 64)
	for _, name := range []string{"all", "shard", "random"} {
		wl := newWorkload(name, cfg, data, "", nil)
		for i, b := range wl.boxes {
			for r := range b.h {
				copy(wl.bufs[i][r*b.w*4:], data[((b.r0+r)*64+b.c0)*4:((b.r0+r)*64+b.c0+b.w)*4])
			}
		}
		if err := wl.verify(); err != nil {
			t.Fatalf("%s: correct buffers: %v", name, err)
		}
		last := wl.bufs[len(wl.bufs)-1]
		last[len(last)-1] ^= 1
		if err := wl.verify(); !errors.Is(err, errMismatch) {
			t.Fatalf("%s: corrupted buffer: got %v, want errMismatch", name, err)
		}
	}
}
