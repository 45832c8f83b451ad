//go:build race

package cloud_test

// The race detector allows at most 8128 live goroutines.
const raceEnabled = true
