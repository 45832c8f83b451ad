package store

// UpdateSeen reports whether an update_id was accepted or processed in the last 24
// hours. It reads what is durable: a marker whose commit is still in flight is not
// seen, and ProcessUpdate's own check settles that race.
func (s *Store) UpdateSeen(updateID int64) (bool, error) {
	if !s.seen.mayBeSeen(updateID) {
		return false, nil
	}
	var seen bool
	err := s.view(func(txn *tx) error {
		var err error
		seen, err = hasSeenMarker(txn, updateID)
		return err
	})
	return seen, err
}

// ProcessUpdate commits the outcome of an update that never entered the inbox (the
// webhook's): the window, the replies, the user's seen mark and the update's 24 h
// seen-marker in one commit, made before queued background commits since a webhook
// request waits on it. A marker already there means the update was processed (or
// accepted into the inbox) before: nothing is written and ErrAlreadyProcessed is
// returned once what set the marker is durable, so a duplicate is never acknowledged
// on the strength of a commit that could still fail.
func (s *Store) ProcessUpdate(o UpdateOutcome) ([]OutboxMessage, error) {
	now := s.now()
	replies, err := s.assignIDs(o.Replies, now)
	if err != nil {
		return nil, err
	}
	seen := false
	err = s.updateNow(func(txn *tx) error {
		var err error
		if seen, err = s.seenMarker(txn, o.UpdateID); err != nil || seen {
			return err
		}
		if err := s.putSeenMarker(txn, o.UpdateID); err != nil {
			return err
		}
		return s.putOutcome(txn, o, replies, now)
	})
	switch {
	case err != nil:
		return nil, err
	case seen:
		return nil, ErrAlreadyProcessed
	}
	return replies, nil
}
