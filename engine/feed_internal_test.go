package engine

import (
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
)

// Publishers send to the feed hub only while a console subscribes: Subscribe counts
// the subscriber before it returns, so the first event after it is delivered, and its
// cancel, however often called, takes the count back to none.
func TestFeedIsWatchedOnlyWhileSubscribed(t *testing.T) {
	eng, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	e := &Engine{actors: eng, feed: &feedRef{pid: eng.Spawn(newFeedHub(), "feed")}}
	e.started.Store(true)
	if e.feed.watched() {
		t.Fatal("watched before anyone subscribed")
	}
	ch, cancel, err := e.Subscribe(4)
	if err != nil {
		t.Fatal(err)
	}
	if !e.feed.watched() {
		t.Fatal("not watched once Subscribe returned")
	}
	if e.feed.watched() { // as every publisher does
		eng.Send(e.feed.pid, publishEvent{ev: Event{Type: "order", Data: OrderEvent{OrderID: 7}}})
	}
	select {
	case ev := <-ch:
		if d, ok := ev.Data.(OrderEvent); ev.Type != "order" || !ok || d.OrderID != 7 {
			t.Fatalf("got %+v, want order 7's event", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the event published after Subscribe never arrived")
	}
	second, cancelSecond, _ := e.Subscribe(4)
	cancel()
	cancel()
	if !e.feed.watched() {
		t.Fatal("not watched while a second console still subscribes")
	}
	cancelSecond()
	if e.feed.watched() {
		t.Fatalf("still watched after every console left (%d watchers)", e.feed.watchers.Load())
	}
	for _, c := range []<-chan Event{ch, second} {
		select {
		case _, open := <-c:
			if open {
				continue // an event sent before the cancel; the close follows
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a cancelled subscription was never closed")
		}
	}
}
