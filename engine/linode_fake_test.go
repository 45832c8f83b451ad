package engine_test

import (
	"testing"

	"github.com/hangarhq/hangar/engine/cloud"
	"github.com/hangarhq/hangar/internal/fakes/fakeapi"
	linodefake "github.com/hangarhq/hangar/internal/fakes/linode"
)

// linodeFake starts the Linode fake and a real client of it, closed with the test.
func linodeFake(t *testing.T, opts ...fakeapi.Option) (*linodefake.Server, *cloud.Linode) {
	t.Helper()
	fake := linodefake.New("tok", opts...)
	t.Cleanup(fake.Close)
	lin, err := cloud.NewLinode("tok", fake.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return fake, lin
}
