package pipeline_test

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/gozarr/gozarr/internal/cputime"
	"github.com/gozarr/gozarr/nd"
)

// BenchmarkTileCopy is the limit of a tile read from cached chunks: the
// copy of a random 64×64 float32 tile alone (nd.Copy, as the cached path
// ends), out of 128 chunks of 512² (128 MiB, far more than the CPU caches
// hold, like a chunk cache of many chunks: cold) and out of one chunk the
// CPU caches hold (warm), alternately in one loop, by CPU time per tile on
// a locked thread. x-cold is the cold copy's time over the warm one's.
// touched-cpu-ns/tile is the cold copy preceded by a load of every cache
// line of the tile's rows (memory-level parallelism: the loads are
// independent, the copy's are spread over 64 memmove calls), x-touched its
// time over the plain cold copy's; touched-warm-cpu-ns/tile the same on
// the warm chunk, what touching costs when the rows are in the caches.
//
//	go test ./pipeline -run '^$' -bench TileCopy -benchtime 20000x
func BenchmarkTileCopy(b *testing.B) {
	const side, tile, chunks = 512, 64, 128
	data := make([]byte, chunks*side*side*4)
	for i := range data {
		data[i] = byte(i)
	}
	out := make([]byte, tile*tile*4)
	dst := nd.Contiguous(out, []int{tile, tile}, 4)
	r := rand.New(rand.NewPCG(1, 2))
	src := func(c int) nd.View {
		i, j := r.IntN(side/tile)*tile, r.IntN(side/tile)*tile
		v := nd.Contiguous(data[c*side*side*4:(c+1)*side*side*4], []int{side, side}, 4)
		return v.Slice([]int{i, j}, []int{tile, tile}, []int{1, 1})
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const batch = 64 // copies per clock reading: the clock costs about a copy
	var cold, warm, touched, touchedWarm time.Duration
	colds, warms := make([]nd.View, batch), make([]nd.View, batch)
	tcolds, twarms := make([]nd.View, batch), make([]nd.View, batch)
	var sink byte
	touchCopy := func(s nd.View) {
		for r := range tile {
			o := s.Offset + r*s.Strides[0]
			sink += s.Data[o] + s.Data[o+64] + s.Data[o+128] + s.Data[o+192]
		}
		nd.Copy(dst, s)
	}
	b.SetBytes(4 * batch * tile * tile * 4)
	for b.Loop() {
		for k := range batch {
			colds[k], warms[k] = src(r.IntN(chunks)), src(0)
			tcolds[k], twarms[k] = src(r.IntN(chunks)), src(0)
		}
		t0 := cputime.Thread()
		for _, s := range colds {
			nd.Copy(dst, s)
		}
		t1 := cputime.Thread()
		for _, s := range warms {
			nd.Copy(dst, s)
		}
		t2 := cputime.Thread()
		for _, s := range tcolds {
			touchCopy(s)
		}
		t3 := cputime.Thread()
		for _, s := range twarms {
			touchCopy(s)
		}
		touchedWarm += cputime.Thread() - t3
		touched += t3 - t2
		warm += t2 - t1
		cold += t1 - t0
	}
	if sink == 1 {
		b.Log("") // keeps the touching loads
	}
	b.ReportMetric(float64(cold)/float64(b.N*batch), "cold-cpu-ns/tile")
	b.ReportMetric(float64(warm)/float64(b.N*batch), "warm-cpu-ns/tile")
	b.ReportMetric(float64(touched)/float64(b.N*batch), "touched-cpu-ns/tile")
	b.ReportMetric(float64(touchedWarm)/float64(b.N*batch), "touched-warm-cpu-ns/tile")
	if warm > 0 && cold > 0 {
		b.ReportMetric(float64(cold)/float64(warm), "x-cold")
		b.ReportMetric(float64(touched)/float64(cold), "x-touched")
	}
}
