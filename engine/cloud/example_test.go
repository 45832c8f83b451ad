package cloud_test

import (
	"context"
	"fmt"

	"github.com/hangarhq/hangar/engine/cloud"
)

// A retried order looks for its instance by label before creating one, so a create
// whose answer was lost never makes a second server.
func Example() {
	ctx := context.Background()
	var p cloud.Provider = cloud.NewSim(cloud.SimConfig{}) // no latency, no failures

	provision := func(label string) (cloud.Instance, error) {
		if in, ok, err := p.FindByLabel(ctx, label); err != nil || ok {
			return in, err
		}
		return p.Create(ctx, cloud.CreateRequest{Label: label, Region: "ap-northeast", Plan: "sim-small"})
	}
	first, _ := provision("hangar-order-123")
	again, _ := provision("hangar-order-123")
	fmt.Println(first.ID == again.ID, first.Ready())

	_, err := p.Create(ctx, cloud.CreateRequest{Label: "hangar-order-124", Region: "ap-northeast", Plan: cloud.SimInvalid})
	fmt.Println(cloud.IsPermanent(err), cloud.IsRetryable(err))
	// Output:
	// true true
	// true false
}
