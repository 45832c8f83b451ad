// Command bench prints hangar's performance figures (`make bench`). Each scenario starts
// the real stack in-process, loads it over loopback and prints one header and aligned
// result lines. Select scenarios with -only (default: all of them, in table order).
//
//	go run ./internal/bench -only webhook -duration 10s -cpuprofile webhook.prof
package main
