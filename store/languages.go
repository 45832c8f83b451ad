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

// GetUserLanguage reads a user's language record (empty when none).
func (s *Store) GetUserLanguage(user int64) (UserLanguage, error) {
	var l UserLanguage
	err := s.view(func(txn *tx) error { return getRecord(txn, languageKey(user), &l) })
	if errors.Is(err, ErrNotFound) {
		return UserLanguage{}, nil
	}
	return l, err
}

// SetUserLanguage stores a user's language record.
func (s *Store) SetUserLanguage(user int64, l UserLanguage) error {
	return s.update(func(txn *tx) error { return putRecord(txn, languageKey(user), &l, 0) })
}
