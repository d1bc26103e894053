package pipeline

// SetMinVecRun sets the shortest average output run read with a vectored
// read, for tests that reach that path with small chunks, and returns a
// function that restores it. Tests using it must not run in parallel.
func SetMinVecRun(n int) (restore func()) {
	old := minVecRun
	minVecRun = max(n, 1)
	return func() { minVecRun = old }
}

// ShardCost is shardCost, for tests.
var ShardCost = shardCost
