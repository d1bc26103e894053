//go:build !race

package pcodec

// raceEnabled trims the test matrix under the race detector.
const raceEnabled = false
