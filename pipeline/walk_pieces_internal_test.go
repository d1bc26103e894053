package pipeline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/mem"
)

// TestShardOfPointsGoesInPieces: the fetcher hands the decode workers a
// shard of points read whole as pieces (unitWalk: 64 inner chunks, 16 a
// piece for two workers, so 4 units, not 64 and not one batch of all),
// whether the points are placed (the grouping's counting sort) or carry
// their coordinates; the pieces hold every inner chunk the part needs
// once, a worker placing them gives every point its value, and every
// byte held goes back to the budget once they are done.
func TestShardOfPointsGoesInPieces(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(5, 6))
	shape := []int{32, 32, 32}
	g, st, data := randomCube32(t, shape, dtype.TypeFloat32, r, 8) // one shard of 4³ inner chunks of 8³
	pts := nd.Points{Rank: 3}
	for range 5000 {
		pts.Coords = append(pts.Coords, r.IntN(32), r.IntN(32), r.IntN(32))
	}
	gr, err := groupPoints(g, pts, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer gr.release()
	sorted, order := sortPoints(g, pts, false)
	if order == nil {
		t.Fatal("random points came sorted")
	}
	for _, tc := range []struct {
		name   string
		parts  func(yield func(nd.ChunkPart) bool)
		n      int
		placed bool
		at     func(k int) []int // the point whose value lands at k of the output
	}{
		{"placed", partsOnly(gr.parts(g)), pts.Len(), true, pts.At},
		{"coordinates", nd.PointParts(sorted, shape), sorted.Len(), false, sorted.At},
	} {
		var part nd.ChunkPart
		for p := range tc.parts {
			part = p
		}
		if placed := part.Elems != nil; placed != tc.placed {
			t.Fatalf("%s: part placed %v", tc.name, placed)
		}
		if n := part.NumParts(g.Shard.ChunkShape()); n != 64 {
			t.Fatalf("%s: %d inner parts, want 64", tc.name, n)
		}
		out := make([]byte, tc.n*4)
		e := newEngine(st, g, nd.Contiguous(out, pointsShape(3, tc.n), 4), Options{DecodeConcurrency: 2})
		e.ready = make(chan unit, 100)
		f := newFetcher(e)
		wu := g.writeUnit(part)
		if err := f.readShard(ctx, &wu); err != nil {
			t.Fatal(err)
		}
		f.close()
		close(e.ready)
		w := worker{e: e}
		units, inner := 0, 0
		for u := range e.ready {
			units++
			if u.kind != unitWalk {
				t.Fatalf("%s: unit of kind %d, want unitWalk (%d)", tc.name, u.kind, unitWalk)
			}
			inner += u.part.NumParts(g.Shard.ChunkShape())
			if err := w.place(ctx, &u); err != nil {
				t.Fatal(err)
			}
			e.done(&u)
		}
		w.close()
		if units != 4 || inner != 64 {
			t.Fatalf("%s: %d units of %d inner chunks, want 4 of 64", tc.name, units, inner)
		}
		for k := range tc.n {
			p := tc.at(k)
			i := ((p[0]*32+p[1])*32 + p[2]) * 4
			if got, want := out[4*k:4*k+4], data[i:i+4]; string(got) != string(want) {
				t.Fatalf("%s: point %d %v = %v, want %v", tc.name, k, p, got, want)
			}
		}
		if n := e.inflight.InUse(); n != 0 {
			t.Fatalf("%s: %d bytes held against the budget", tc.name, n)
		}
	}
}

// partsOnly drops the counts of grouping.parts.
func partsOnly(parts func(yield func(nd.ChunkPart) bool), _, _ int) func(yield func(nd.ChunkPart) bool) {
	return parts
}

// randomCube32 writes a 32³ array of typ in shards of the shape shard
// of 8³ inner chunks (zstd level 1) to a new memory store, its bytes
// drawn from r below limit, and returns its grid, the store and the bytes.
func randomCube32(t *testing.T, shard []int, typ dtype.DataType, r *rand.Rand, limit int) (*Grid, *mem.Store, []byte) {
	t.Helper()
	shape := []int{32, 32, 32}
	g := specGrid(t, `[{"name": "sharding_indexed", "configuration": {"chunk_shape": [8, 8, 8],
		"codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1, "checksum": false}}],
		"index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}}]`,
		shape, shard, typ)
	g.Key = func(c []int) string { return fmt.Sprintf("c/%d/%d/%d", c[0], c[1], c[2]) }
	st := mem.New()
	data := make([]byte, 32*32*32*g.itemSize())
	for i := range data {
		data[i] = byte(r.IntN(limit))
	}
	all, err := nd.Normalize([]nd.Item{nd.All(), nd.All(), nd.All()}, shape)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(context.Background(), st, g, all, data, Options{}); err != nil {
		t.Fatal(err)
	}
	return g, st, data
}
