// Package fakeapi is what the fake cloud APIs (linodefake, vultrfake) share, so that
// each of them holds only its provider's wire format: paths, JSON shapes, status codes,
// error wording, validation and paging.
//
// Shared here:
//
//   - Fake: the test server, the bearer-token check, the 404 for unknown paths, and
//     Close, which lets hanging requests go before stopping the server.
//   - Base: injected faults (FailNext, RateLimitNext, HangNext, CreateThenHang), latency,
//     the request log, and Wait, which wakes on every request and instance change.
//   - Store: the instances by id, numbered in creation order, and the secret each was
//     made with, by label; what it hands out are copies.
//   - Settings and the options that set them (latency, boot delay, plans, regions,
//     default page size); Errors, how a provider words the answers given on its behalf.
//
// A provider embeds a *Fake, so these methods are part of its own server's API.
package fakeapi
