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
	var cold, warm time.Duration
	colds, warms := make([]nd.View, batch), make([]nd.View, batch)
	b.SetBytes(2 * batch * tile * tile * 4)
	for b.Loop() {
		for k := range batch {
			colds[k], warms[k] = src(r.IntN(chunks)), src(0)
		}
		t0 := cputime.Thread()
		for _, s := range colds {
			nd.Copy(dst, s)
		}
		t1 := cputime.Thread()
		for _, s := range warms {
			nd.Copy(dst, s)
		}
		warm += cputime.Thread() - t1
		cold += t1 - t0
	}
	b.ReportMetric(float64(cold)/float64(b.N*batch), "cold-cpu-ns/tile")
	b.ReportMetric(float64(warm)/float64(b.N*batch), "warm-cpu-ns/tile")
	if warm > 0 {
		b.ReportMetric(float64(cold)/float64(warm), "x-cold")
	}
}
