// Package linodefake is a local stand-in for the Linode API v4, speaking its real wire
// format so that hangar's Linode provider is tested through the real linodego client.
//
// It implements the endpoints hangar uses:
//
//	POST   /v4/linode/instances       create (label unique per account, as at Linode)
//	GET    /v4/linode/instances       list, with X-Filter on label/region/type and page/page_size
//	GET    /v4/linode/instances/{id}  get
//	DELETE /v4/linode/instances/{id}  delete
//
// Every request must carry "Authorization: Bearer <token>". Failures can be injected
// per request (FailNext, RateLimitNext, HangNext, CreateThenHang) and latency added
// (SetLatency). A new instance answers "provisioning" and turns "running" after the
// boot delay (fakeapi.WithBootDelay, default 0: running from the first read).
//
// What does not depend on Linode's wire format (the token check, faults, latency, the
// request log, the instances) is fakeapi's; this package keeps the paths, JSON shapes,
// status codes, error reasons, validation and page/page_size paging.
//
// Request bodies are never logged or kept, except the root password each instance was
// created with, held in memory so that a test can check it reached the provider
// (RootPass).
package linodefake
