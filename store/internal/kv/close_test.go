package kv

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

// Readers that are still running when the store closes (an actor whose shutdown
// deadline passed) get ErrClosed or a value, never a read of a closed Badger.
func TestViewsRacingCloseEndCleanly(t *testing.T) {
	for round := range 5 {
		s := quietOpen(t, t.TempDir())
		for i := range 200 {
			if err := setKey(s, fmt.Sprint("k", i), "v"); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for i := 0; ; i++ {
					_, err := getKey(s, fmt.Sprint("k", (i*7+g)%400)) // half of them only in Badger's misses
					if errors.Is(err, ErrClosed) {
						return
					}
				}
			}()
		}
		close(start)
		if err := s.Close(); err != nil {
			t.Fatalf("round %d: close: %v", round, err)
		}
		wg.Wait()
	}
}
