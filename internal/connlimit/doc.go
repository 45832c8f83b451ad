// Package connlimit wraps a net.Listener so that running out of connections is a
// budget, not a crash: accept errors such as EMFILE back off and retry (as net/http
// does) instead of ending the server, connections beyond a cap are refused politely
// and counted, and a connection that must not be reset before its last answer is read
// can ask for a lingering close. The HTTP and SSH listeners of hangar serve share it.
package connlimit
