package cloud

import (
	"context"
	"time"
)

// Instance is a server at a provider.
type Instance struct {
	ID     string // provider's instance id, as a string
	Label  string
	IPv4   string // public IPv4, "" until assigned
	Status string // provider's status word, e.g. "running", "provisioning", "active", "pending"
	Region string
	Plan   string
	// Created is when the provider made the server (zero if it does not say): among
	// duplicates of one order, the oldest is kept.
	Created time.Time
	// RootPassword is set only by Create, and only when the provider generated the
	// password itself (Vultr). It is for the one message to the user: never store or
	// log it.
	RootPassword string
}

// Ready reports whether the instance is up with a public address: Linode and the
// simulator say "running", Vultr says "active".
func (i Instance) Ready() bool {
	return i.IPv4 != "" && (i.Status == "running" || i.Status == "active")
}

// CreateRequest asks a provider for one server.
type CreateRequest struct {
	Label        string // unique per order: hangar-order-<id>; idempotency key
	Region       string
	Plan         string // provider plan id, e.g. "g6-nanode-1" or "vc2-1c-1gb"
	Image        string // "" means the provider default (linode/debian12, Vultr os_id 2136 Debian 12)
	RootPassword string // sent once, never stored or logged
	// NotBefore, when set, is when the order was made (less the clocks' skew): a server
	// already holding Label but made before it belongs to no request of this order (a
	// label reused after a restore, or another install on the account), and is never
	// adopted.
	NotBefore time.Time
	// Fresh says no earlier request of this order can have made a server (its first
	// attempt): a server already holding Label is someone else's, never adopted.
	Fresh bool
	// SSHKeys are public keys (authorized_keys lines) installed for root: Linode takes
	// them as authorized_keys, Vultr as ids of keys registered with its /v2/ssh-keys.
	SSHKeys []string
}

// Provider creates, finds and deletes servers. Every error it returns answers
// IsRetryable or IsPermanent (or is a cancellation by the caller).
type Provider interface {
	Name() string // "linode", "vultr", "sim"
	Create(ctx context.Context, req CreateRequest) (Instance, error)
	// FindByLabel is the idempotency lookup a retried order makes before Create.
	FindByLabel(ctx context.Context, label string) (Instance, bool, error)
	Get(ctx context.Context, id string) (Instance, error)
	// Delete treats an instance that is already gone as deleted.
	Delete(ctx context.Context, id string) error
}

// Tag marks every instance hangar creates, so an operator can tell them apart in the
// provider's console.
const Tag = "hangar"

var (
	_ Provider = (*Linode)(nil)
	_ Provider = (*Vultr)(nil)
	_ Provider = (*Sim)(nil)
)

// PowerSwitch turns a server off and on without deleting it: billing suspends a
// server whose period is unpaid and brings it back when it is paid. Both treat a
// server already in the asked state as done, so a retried call is harmless.
type PowerSwitch interface {
	PowerOff(ctx context.Context, id string) error
	PowerOn(ctx context.Context, id string) error
}

var (
	_ PowerSwitch = (*Linode)(nil)
	_ PowerSwitch = (*Vultr)(nil)
	_ PowerSwitch = (*Sim)(nil)
)
