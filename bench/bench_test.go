package main

import (
	"context"
	"encoding/binary"
	"math"
	"testing"

	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"
)

// The generator's bulk and per-element forms agree, so children can check
// any element they read.
func TestGenerateMatchesValue(t *testing.T) {
	for _, n := range []int{1, 7, 64} {
		data := generate(3, n)
		for i := range n {
			for j := range n {
				got := math.Float32frombits(binary.LittleEndian.Uint32(data[4*(i*n+j):]))
				if want := value(3, n, i, j); got != want {
					t.Fatalf("n=%d [%d, %d]: generate %v, value %v", n, i, j, got, want)
				}
			}
		}
	}
	if a, b := value(1, 64, 5, 9), value(2, 64, 5, 9); a == b {
		t.Errorf("seeds 1 and 2 give the same element %v", a)
	}
	// Quantised to 1/64.
	if v := value(1, 64, 5, 9); v*64 != float32(math.Round(float64(v)*64)) {
		t.Errorf("value %v is not a multiple of 1/64", v)
	}
}

// Every layout round-trips through gozarr, and its chunk files decode with
// the codec-only baseline to the same total.
func TestLayoutsRoundTrip(t *testing.T) {
	g := geometry{N: 64, Chunk: 16, Shard: 32, Inner: 16, Seed: 1}
	data := generate(g.Seed, g.N)
	for _, l := range allLayouts() {
		t.Run(l.Name, func(t *testing.T) {
			dir := t.TempDir()
			st, err := fs.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			meta, err := metadata(l, g)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			a, err := zarr.CreateArray(ctx, st, "", meta)
			if err != nil {
				t.Fatal(err)
			}
			if err := a.WriteBytes(ctx, data); err != nil {
				t.Fatal(err)
			}
			if got := a.Sharding() != nil; got != l.Sharded {
				t.Fatalf("sharded = %v, want %v", got, l.Sharded)
			}
			out := make([]byte, len(data))
			if err := a.ReadBytes(ctx, out); err != nil {
				t.Fatal(err)
			}
			if n, err := check(out, g, 0, 0, 1, 1, g.N, g.N, 500, 9); err != nil || n != 500 {
				t.Fatalf("check: %d, %v", n, err)
			}
			if l.Codec == "none" {
				return
			}
			chunks, err := loadChunks(dir, l, g)
			if err != nil {
				t.Fatal(err)
			}
			unit := g.unit(l)
			if want := (g.N / unit) * (g.N / unit); len(chunks) != want {
				t.Fatalf("%d chunks, want %d", len(chunks), want)
			}
			dec, err := newDecoder(l.Codec)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, unit*unit*4, unit*unit*4+decoderSlack)
			for i, c := range chunks {
				if err := dec(buf, c); err != nil {
					t.Fatalf("chunk %d: %v", i, err)
				}
			}
		})
	}
}

func TestRegions(t *testing.T) {
	rs := chunkRegions(10, 4)
	if len(rs) != 9 || rs[8] != (region{8, 8, 2, 2}) || rs[1] != (region{0, 4, 4, 4}) {
		t.Errorf("chunkRegions(10, 4) = %v", rs)
	}
	a, b := randomRegions(64, 16, 20, 7), randomRegions(64, 16, 20, 7)
	for i := range a {
		if a[i] != b[i] || a[i].R0%16 != 0 || a[i].C0%16 != 0 || a[i].H != 16 {
			t.Fatalf("random regions not repeatable or not aligned: %v vs %v", a[i], b[i])
		}
	}
}

func TestEvaluate(t *testing.T) {
	r := report{Rows: []row{
		{Layout: "zstd-sharded", Workload: "read-all", CodecRatio: 0.9, OutBytes: 1 << 30, AllocPct: 1, PeakRSSMiB: 1500, ZarritaSeconds: 2, VsZarrita: 3},
		{Layout: "none", Workload: "read-all", MemcpyRatio: 0.5, OutBytes: 1 << 30, AllocPct: 8, PeakRSSMiB: 1000},
		{Layout: "none", Workload: "chunks", ZarritaSeconds: 1, VsZarrita: 0.8},
	}}
	r.Pipeline.MaxBytesInFlight = 256 << 20
	want := map[string]bool{
		"read-all zstd-sharded ≥ 0.85 × codec-only (all cores)": true,
		"read-all none ≥ 0.6 × memcpy":                          false,
		"faster than zarrita.js on every workload":              false,
		"read-all allocates ≤ 5% of the output":                 false,
		"read-all peak RSS ≤ output + in-flight cap + 64 MiB":   false, // 1500 > 1024+256+64
	}
	got := evaluate(r)
	if len(got) != len(want) {
		t.Fatalf("%d targets, want %d: %+v", len(got), len(want), got)
	}
	for _, x := range got {
		if w, ok := want[x.Name]; !ok || w != x.Met {
			t.Errorf("%s: met=%v (%s), want %v", x.Name, x.Met, x.Detail, w)
		}
	}
}
