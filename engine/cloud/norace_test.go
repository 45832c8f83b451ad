//go:build !race

package cloud_test

const raceEnabled = false
