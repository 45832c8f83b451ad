package engine_test

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/hangartest"
)

// A user actor lives until its idle timeout, so what an idle one holds is multiplied by
// every user active within it. Each used to hold about 4 KB: its dependencies copied
// twice, its last update (Hollywood keeps an actor's last message) and a 16-slot inbox;
// 40,000 users put `hangar serve` at its memory limit. The heap per live user, store
// records included, must stay well under that.
func TestIdleUserActorsStaySmall(t *testing.T) {
	const users = 6000
	// Measured in a process of its own: what earlier tests leave is let go on their
	// servers' schedules (fasthttp's idle-worker cleaner sleeps 10 s), and it would be
	// let go in the middle of the measurement and hide the growth.
	if os.Getenv(userMemoryChild) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestIdleUserActorsStaySmall$", "-test.v")
		cmd.Env = append(os.Environ(), userMemoryChild+"=1")
		out, err := cmd.CombinedOutput()
		t.Logf("%s", out)
		if err != nil {
			t.Fatalf("the measuring process: %v", err)
		}
		return
	}
	env := hangartest.Start(t, hangartest.Options{})
	post := func(from, to int64) {
		var wg sync.WaitGroup
		next := make(chan int64)
		for range 16 {
			wg.Go(func() {
				for u := range next {
					// An edited message: an actor is spawned and the update recorded, with no
					// reply, whose outbox record would be counted here too.
					if r := env.PostUpdate(t, editedMessage(u, u)); r.Status != http.StatusOK {
						t.Errorf("update from user %d: %d %s", u, r.Status, r.Body)
					}
				}
			})
		}
		for u := from; u < to; u++ {
			next <- u
		}
		close(next)
		wg.Wait()
	}
	heap := func() int64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc) - int64(len(env.Logs.String()))
	}
	post(1, 201) // the first users' fixed costs: maps grown, pools filled
	hangartest.WaitFor(t, 10*time.Second, "the first actors", func() bool { return env.Metric(t, "hangar_user_actors") == 200 })
	before := heap()
	post(1001, 1001+users)
	hangartest.WaitFor(t, 10*time.Second, "every actor", func() bool { return env.Metric(t, "hangar_user_actors") == 200+users })
	time.Sleep(1500 * time.Millisecond) // the applier takes the last commits into the cache
	perUser := (heap() - before) / users
	t.Logf("%d live user actors: %d bytes of heap each, their store records included", users, perUser)
	if perUser > 2500 {
		t.Errorf("each live user actor holds %d bytes of heap, over 2,500", perUser)
	}
}

const userMemoryChild = "HANGAR_TEST_USER_MEMORY_CHILD"

// editedMessage is an edited_message update from user.
func editedMessage(updateID, user int64) []byte {
	b, _ := json.Marshal(map[string]any{
		"update_id": updateID,
		"edited_message": map[string]any{
			"message_id": updateID, "date": 1764417600, "edit_date": 1764417660, "text": "typo",
			"from": map[string]any{"id": user, "is_bot": false, "first_name": "Ada"},
			"chat": map[string]any{"id": user, "type": "private"},
		},
	})
	return b
}
