package vecread

import "testing"

func TestWorth(t *testing.T) {
	for _, c := range []struct {
		run, chunk int
		want       bool
	}{
		{256, 1 << 20, false},
		{MinRun - 1, 1 << 20, false},
		{MinRun, 1 << 20, true},
		{1 << 20, 1 << 20, true}, // one run: the whole chunk
		{512, 512, true},         // a small chunk in one run
	} {
		if got := Worth(c.run, c.chunk); got != c.want {
			t.Errorf("Worth(%d, %d) = %v", c.run, c.chunk, got)
		}
	}
}

// TestPutRunsDropsReferences: a recycled list keeps no slice of the
// output it was filled with.
func TestPutRunsDropsReferences(t *testing.T) {
	out := make([]byte, 64)
	rp := GetRuns()
	*rp = append(*rp, out[:8], out[16:24], out[32:40])
	backing := (*rp)[:cap(*rp)]
	PutRuns(rp)
	for i, r := range backing {
		if r != nil {
			t.Fatalf("run %d still refers to the output", i)
		}
	}
	if len(*GetRuns()) != 0 {
		t.Error("GetRuns returned a non-empty list")
	}
}
