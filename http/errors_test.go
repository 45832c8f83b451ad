package http

import (
	"errors"
	"fmt"
	"testing"

	"github.com/hangarhq/hangar/store"
)

// A write the disk refused is answered the same on every route, however deep in the
// store it was wrapped.
func TestStoreWriteRefusalsMapToTheirStatus(t *testing.T) {
	cases := []struct {
		err    error
		status int
		code   string
	}{
		{store.ErrInsufficientStorage, 507, "insufficient_storage"},
		{fmt.Errorf("deposit: %w", store.ErrInsufficientStorage), 507, "insufficient_storage"},
		{store.ErrLogUnavailable, 503, "store_unavailable"},
		{fmt.Errorf("commit: %w", store.ErrLogUnavailable), 503, "store_unavailable"},
		{store.ErrClosed, 503, "store_unavailable"},
		{store.ErrNotFound, 404, "not_found"},
	}
	for _, c := range cases {
		ae := domainError(c.err)
		if ae == nil || ae.status != c.status || ae.code != c.code || ae.message == "" {
			t.Errorf("domainError(%v) = %+v, want %d %s with a sentence", c.err, ae, c.status, c.code)
		}
	}
	if ae := domainError(errors.New("something else")); ae != nil {
		t.Errorf("an unknown error mapped to %+v; it must stay a logged 500", ae)
	}
}
