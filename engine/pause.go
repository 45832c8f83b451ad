package engine

import (
	"fmt"

	"github.com/hangarhq/hangar/store"
)

// PauseQueue stops starting order attempts until ResumeQueue, across restarts: for a
// provider outage, during which every attempt would spend a retry and end in the dead
// letter queue. Orders are still accepted and wait; attempts in flight finish. by
// names who asked (for the log). changed is false when it was paused already.
func (e *Engine) PauseQueue(by string) (state store.QueuePause, changed bool, err error) {
	return e.askPause(setPause{paused: true, by: by})
}

// ResumeQueue starts attempts again: the orders due meanwhile start at once, with
// the attempts they had when the pause began.
func (e *Engine) ResumeQueue(by string) (state store.QueuePause, changed bool, err error) {
	return e.askPause(setPause{paused: false, by: by})
}

func (e *Engine) askPause(msg setPause) (store.QueuePause, bool, error) {
	if !e.started.Load() {
		return store.QueuePause{}, false, ErrNotStarted
	}
	res, err := e.actors.Request(e.dispatcher, msg, requestTimeout).Result()
	if err != nil {
		return store.QueuePause{}, false, fmt.Errorf("engine: dispatcher did not answer: %w", err)
	}
	r := res.(pauseResult)
	return r.state, r.changed, r.err
}
