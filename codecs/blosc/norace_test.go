//go:build !race

package blosc

// raceEnabled trims the test matrix under the race detector.
const raceEnabled = false
