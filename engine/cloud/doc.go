// Package cloud owns hangar's conversations with cloud providers: the Provider
// interface the order actors call, its three implementations (Linode through linodego,
// Vultr through govultr, and the in-memory simulator used when no account is
// configured), and the error classification that tells the provisioning queue whether a
// failure is worth retrying.
//
// Creation is idempotent per label: an order's instance is labelled from the order id,
// and a retried or recovered order calls FindByLabel before Create. Provider clients do
// not retry on their own; the queue owns retries, backoff and dead letters, and a
// *Error says which of those applies.
//
// API tokens and root passwords never appear in an error, a log line, or anything
// this package returns other than Instance.RootPassword (set only when the provider,
// not hangar, chose the password).
package cloud
