package cloud_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine/cloud"
)

// Linode answers an action on a server busy with another (a boot, a shutdown) with 400
// "Linode busy.": a state that passes, so the call is retryable, where any other 400
// stays permanent.
func TestLinodeBusyIsRetryable(t *testing.T) {
	for _, tc := range []struct {
		reason    string
		retryable bool
	}{
		{"Linode busy.", true},
		{"Invalid label", false},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"errors":[{"reason":"` + tc.reason + `"}]}`))
		}))
		p, err := cloud.NewLinode("tok", srv.URL, &http.Client{Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		err = p.PowerOff(t.Context(), "123")
		srv.Close()
		if err == nil {
			t.Fatalf("%q: no error", tc.reason)
		}
		if cloud.IsRetryable(err) != tc.retryable || cloud.IsPermanent(err) == tc.retryable {
			t.Fatalf("%q: retryable %v permanent %v, want retryable %v", tc.reason, cloud.IsRetryable(err), cloud.IsPermanent(err), tc.retryable)
		}
	}
}
