// Package vultrfake is a local stand-in for the Vultr API v2, speaking its real wire
// format so that hangar's Vultr provider is tested through the real govultr client.
//
// It implements the endpoints hangar uses:
//
//	POST   /v2/instances        create (202, {"instance": {...}} with default_password)
//	GET    /v2/instances        list, with label/region/tag filters and per_page/cursor paging
//	GET    /v2/instances/{id}   get
//	DELETE /v2/instances/{id}   delete (204)
//
// Every request must carry "Authorization: Bearer <key>". Failures can be injected per
// request (FailNext, RateLimitNext, HangNext, CreateThenHang) and latency added
// (SetLatency). As at Vultr, a new instance is "pending" with main_ip 0.0.0.0 and
// becomes "active" with its address after the boot delay (fakeapi.WithBootDelay, default 0:
// active from the first read). Labels are not unique, as at Vultr.
//
// What does not depend on Vultr's wire format (the token check, faults, latency, the
// request log, the instances) is fakeapi's; this package keeps the paths, JSON shapes,
// status codes, error texts, validation and cursor paging.
//
// Request bodies are never logged or kept. The password the fake generates for each
// instance is held in memory so a test can match it with what hangar told the user
// (Password).
package vultrfake
