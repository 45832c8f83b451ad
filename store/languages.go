package store

import "errors"

// UserLanguage is what the bot knows of a user's language: the one they chose with
// /language (empty until they do), and the language_code their client last sent. The
// client's is kept so that notifications sent outside a conversation (a server
// ready, a failure) are in the language the user's own messages were answered in.
type UserLanguage struct {
	Chosen string `json:"chosen,omitempty"`
	Client string `json:"client,omitempty"`
}

// Store.languages is the users that have a language record: loaded from the records
// at Open, and a user joins it before the commit that writes theirs (records are never
// deleted), so a user not in it has none and GetUserLanguage answers without a read.
// Every order's notes ask, and a user who ordered through the API, or never sent a
// message the bot answered, has no record: the read searched Badger for a key that
// is nowhere.

// GetUserLanguage reads a user's language record (empty when none).
func (s *Store) GetUserLanguage(user int64) (UserLanguage, error) {
	if !s.languages.has(user) {
		return UserLanguage{}, nil
	}
	var l UserLanguage
	err := s.view(func(txn *tx) error { return getRecord(txn, languageKey(user), &l) })
	if errors.Is(err, ErrNotFound) {
		return UserLanguage{}, nil
	}
	return l, err
}

// SetUserLanguage stores a user's language record.
func (s *Store) SetUserLanguage(user int64, l UserLanguage) error {
	return s.update(func(txn *tx) error { return s.putUserLanguage(txn, user, &l) })
}

// putUserLanguage writes a user's language record in txn. Every writer of one goes
// through it, since the record is read only for the users in the set.
func (s *Store) putUserLanguage(txn *tx, user int64, l *UserLanguage) error {
	s.languages.add(user) // before the commit: the set may hold users without a record, never the reverse
	return putRecord(txn, languageKey(user), l, 0)
}
