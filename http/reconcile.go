package http

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"github.com/hangarhq/hangar/engine"
)

// Reconciler is what the reconcile routes need from the engine.
type Reconciler interface {
	Reconcile(ctx context.Context) (engine.ReconcileReport, error)
	LastReconcile() (engine.ReconcileReport, bool, error)
}

// lastReconcile shows the last findings: servers at the providers that no live order
// accounts for (GET /admin/reconcile). Before the first run the report is empty.
func (s *Server) lastReconcile(c *fiber.Ctx) error {
	rep, _, err := s.deps.Reconciler.LastReconcile()
	if err != nil {
		return err
	}
	return c.JSON(normalized(rep))
}

// reconcileNow runs a reconciliation and answers with its findings (POST
// /admin/reconcile); it may delete duplicates, and orphans when the daemon allows it.
func (s *Server) reconcileNow(c *fiber.Ctx) error {
	rep, err := s.deps.Reconciler.Reconcile(c.UserContext())
	if err != nil {
		return err
	}
	return c.JSON(normalized(rep))
}

// normalized answers lists as [] rather than null.
func normalized(rep engine.ReconcileReport) engine.ReconcileReport {
	if rep.Providers == nil {
		rep.Providers = []string{}
	}
	if rep.Duplicates == nil {
		rep.Duplicates = []engine.ReconcileFinding{}
	}
	if rep.Orphans == nil {
		rep.Orphans = []engine.ReconcileFinding{}
	}
	return rep
}
