// Package http owns hangar's Fiber application, the only place Fiber is imported: the
// Telegram webhook, the provisioning and admin APIs, the blog API, health and
// Prometheus metrics. Handlers are thin: they authenticate, decode and validate, then
// call the engine or store through small interfaces declared here; every error leaves
// through one mapper (errors.go) as {"error": "...", "code": "..."} JSON. The admin
// API's bodies are the types of package http/api, which the console decodes too.
package http
