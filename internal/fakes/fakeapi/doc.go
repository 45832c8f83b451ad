// Package fakeapi is what the fake cloud APIs (linodefake, vultrfake) share: injected
// faults, latency, request recording, and waiting for the fake to see a request or a
// change. Each fake embeds a *Base, so these methods are part of its own API, and keeps
// its wire format (paths, JSON shapes, error bodies) to itself.
package fakeapi
