package api

import "time"

// ReconcileReport is GET and POST /admin/reconcile, and the payload of a "reconcile"
// event: the servers at the providers that no live order accounts for. It mirrors
// engine.ReconcileReport.
type ReconcileReport struct {
	At            time.Time          `json:"at,omitzero"` // absent before the first run
	Providers     []string           `json:"providers"`
	Servers       int                `json:"servers"`
	Duplicates    []ReconcileFinding `json:"duplicates"`
	Orphans       []ReconcileFinding `json:"orphans"`
	Deleted       int                `json:"deleted"`
	DeleteOrphans bool               `json:"delete_orphans"`
	Errors        []string           `json:"errors,omitempty"`
}

// ReconcileFinding is one duplicate or orphaned server.
type ReconcileFinding struct {
	Provider    string    `json:"provider"`
	InstanceID  string    `json:"instance_id"`
	Label       string    `json:"label"`
	IPv4        string    `json:"ipv4,omitempty"`
	Created     time.Time `json:"created,omitzero"`
	OrderID     int64     `json:"order_id,omitempty"`
	OrderStatus string    `json:"order_status,omitempty"`
	Kept        string    `json:"kept,omitempty"`
	Reason      string    `json:"reason"`
	Deleted     bool      `json:"deleted"`
	Error       string    `json:"error,omitempty"`
}
