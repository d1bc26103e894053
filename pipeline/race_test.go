//go:build race

package pipeline_test

// raceEnabled: the race detector slows the multi-process tests about
// sixfold; they run fewer rounds under it (CI runs them in full without it).
const raceEnabled = true
