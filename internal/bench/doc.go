// Command bench prints hangar's performance figures (`make bench`). Each scenario starts
// the real stack in-process, loads it over loopback and prints one header and aligned
// result lines. Select scenarios with -only (default: all of them, in table order).
// The anchors scenario runs hangar as a process beside its peers in ./anchors (modules
// of their own) under the same generator, and the run ends with issue 18's ratios.
//
//	go run ./internal/bench -only webhook -duration 10s -cpuprofile webhook.prof
package main
