// Package api owns the admin API's wire format, shared by the server (package http)
// and the console (tui, tui/client and their test fakes), as fixed by
// docs/admin-api.md: the JSON bodies of the admin routes, the error body every route
// answers with, and the events of the Server-Sent Events stream. The server converts
// store records into these types and the console decodes the same types, so each
// shape is declared once, here. Two shapes the engine marshals itself are mirrored
// rather than sent from here: QueueStats (GET /admin/queue and snapshot events, from
// engine.QueueStats) and the event payloads of GET /admin/events.
//
// It holds plain structs and no behaviour, and imports neither Fiber nor the store, so
// that the console can use it without pulling in the server. Field order follows the
// bytes the server has always sent; JSON clients do not depend on it.
package api
