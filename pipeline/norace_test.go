//go:build !race

package pipeline_test

// raceEnabled: see race_test.go.
const raceEnabled = false
