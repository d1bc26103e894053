//go:build unix

package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
)

// TestPlaceWalkMappedFault: a worker walking a piece of points of a
// mapped shard whose file was truncated under it (placeWalk, decoding
// straight from the mapped pages under one guard for the piece) fails
// with an error wrapping codecs.ErrCorrupt that names the shard and the
// inner chunk it was decoding (the first on a page the truncation took),
// not a crash; from the intact file, the same
// piece gives the written values.
func TestPlaceWalkMappedFault(t *testing.T) {
	ctx := context.Background()
	st, dir := tempStore(t)
	shape := []int{16, 16, 16}
	g := specGrid(t, zstdShards, shape, shape, dtype.TypeFloat32) // one shard of 8 inner chunks
	g.Key = func(c []int) string { return fmt.Sprintf("c/%d/%d/%d", c[0], c[1], c[2]) }
	data := make([]byte, 16*16*16*4)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range data {
		data[i] = byte(r.IntN(256)) // incompressible: 2 KiB an inner chunk, the last past the first page
	}
	if err := Write(ctx, st, g, sel(t, shape, nd.All(), nd.All(), nd.All()), data, Options{}); err != nil {
		t.Fatal(err)
	}
	key := g.Key([]int{0, 0, 0})
	pts := nd.Points{Rank: 3}
	for range 500 {
		pts.Coords = append(pts.Coords, r.IntN(16), r.IntN(16), r.IntN(16))
	}
	// Sorted by inner chunk: each inner chunk one run.
	sorted, _ := sortPoints(g, pts, false)
	var part nd.ChunkPart
	for p := range nd.PointParts(sorted, shape) {
		part = p // the one shard's
	}
	walk := func(truncate bool) ([]byte, error) {
		b, unmap, err := st.Map(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		ix, err := g.Shard.IndexOf(append([]byte(nil), b...))
		if err != nil {
			t.Fatal(err)
		}
		out := make([]byte, sorted.Len()*4)
		e := &engine{}
		e.init(st, g, nd.Contiguous(out, pointsShape(3, sorted.Len()), 4), Options{})
		w := worker{e: e}
		defer w.close()
		h := &hold{unmap: unmap}
		defer unmap()
		var piece nd.ChunkPart
		for q := range part.SplitParts(g.Shard.ChunkShape(), 1) {
			piece = q
		}
		u := unit{kind: unitWalk, key: key, part: piece, hold: h, walk: &shardWalk{ref: shardRef{l: g.Shard, key: key}, ix: ix, mem: b}}
		if truncate {
			if err := os.Truncate(filepath.Join(dir, filepath.FromSlash(key)), int64(os.Getpagesize())); err != nil {
				t.Fatal(err)
			}
		}
		return out, w.place(ctx, &u)
	}
	out, err := walk(false)
	if err != nil {
		t.Fatal(err)
	}
	for k := range sorted.Len() {
		p := sorted.At(k)
		i := ((p[0]*16+p[1])*16 + p[2]) * 4
		if got, want := out[4*k:4*k+4], data[i:i+4]; string(got) != string(want) {
			t.Fatalf("point %v = %v, want %v", p, got, want)
		}
	}
	// The first inner chunk (in C order) that the truncation cut.
	b, err := st.Get(ctx, key, store.Full())
	if err != nil {
		t.Fatal(err)
	}
	ix, err := g.Shard.IndexOf(b)
	if err != nil {
		t.Fatal(err)
	}
	cut := -1
	for lin := range g.Shard.NumChunks() {
		if off, n, ok := ix.Entry(lin); ok && off+n > int64(os.Getpagesize()) {
			cut = lin
			break
		}
	}
	if cut < 1 {
		t.Fatalf("inner chunk %d is the first past the first page, want one after the first", cut)
	}
	name := fmt.Sprintf("shard %q: inner chunk [%d %d %d]", key, cut/4, cut/2%2, cut%2)
	_, err = walk(true)
	if !errors.Is(err, codecs.ErrCorrupt) || !strings.Contains(err.Error(), "memory fault") ||
		!strings.Contains(err.Error(), name) {
		t.Fatalf("walk of truncated pages: %v, want ErrCorrupt, a memory fault, naming %s", err, name)
	}
}
