package store

import (
	"testing"
)

// Records that are only ever listed (ledger lines, visitor-log slots) are marked for
// kv to leave out of its record cache once Badger has them: a run of them does not grow
// what the store holds in memory, and every one is still listed.
func TestListedRecordsAreNotCached(t *testing.T) {
	const n = 300
	cases := []struct {
		name  string
		write func(s *Store, i int) error
		list  func(s *Store) (int, error)
	}{
		{
			name:  "ledger lines",
			write: func(s *Store, i int) error { _, err := s.Deposit(7, int64(i+1)); return err },
			list: func(s *Store) (int, error) {
				lines, err := s.Ledger(7, 2*n)
				return len(lines), err
			},
		},
		{
			// One reader and one slug: after the first view only the visitor-log slot
			// is new (the view is not counted again within the dedup window).
			name: "visitor log",
			write: func(s *Store, i int) error {
				_, err := s.RecordView(Hit{Slug: "hello", IP: "192.0.2.7"})
				return err
			},
			list: func(s *Store) (int, error) {
				v, err := s.RecentVisitors(2 * n)
				return len(v), err
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := quietOpen(t, t.TempDir())
			defer s.Close()
			if err := c.write(s, 0); err != nil {
				t.Fatal(err)
			}
			settle(t, s)
			before := s.LogStats().Overlay
			for i := 1; i < n; i++ {
				if err := c.write(s, i); err != nil {
					t.Fatal(err)
				}
			}
			settle(t, s)
			if grew := s.LogStats().Overlay - before; grew > n/10 {
				t.Errorf("%d more records held in memory after %d writes of listed records, want under %d", grew, n-1, n/10)
			}
			got, err := c.list(s)
			if err != nil || got != n {
				t.Fatalf("listed %d, %v; want %d", got, err, n)
			}
		})
	}
}
