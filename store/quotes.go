package store

import (
	"errors"
	"time"
)

// QuoteTTL is how long an order's confirm button stays valid.
const QuoteTTL = 10 * time.Minute

// Quote is an order a user asked for and has not confirmed yet. The confirm button
// carries only its nonce, so the button cannot be forged into another plan or price,
// and taking the quote once makes a double tap create one order.
type Quote struct {
	Nonce     string    `json:"nonce"`
	UserID    int64     `json:"user_id"`
	ChatID    int64     `json:"chat_id"`
	SpecID    string    `json:"spec_id"`
	Region    string    `json:"region"`
	Price     int64     `json:"price"`
	CreatedAt time.Time `json:"created_at"`
}

// PutQuote stores a quote until QuoteTTL.
func (s *Store) PutQuote(q Quote) error {
	q.CreatedAt = s.now()
	return s.update(func(txn *tx) error { return putRecord(txn, quoteKey(q.Nonce), q, QuoteTTL) })
}

// ReturnQuote puts back a quote taken for an order that could not be written, with its
// first time, so that the button works again until the quote's own end.
func (s *Store) ReturnQuote(q Quote) error {
	left := QuoteTTL - s.now().Sub(q.CreatedAt)
	if left <= 0 {
		return nil
	}
	return s.update(func(txn *tx) error { return putRecord(txn, quoteKey(q.Nonce), q, left) })
}

// GetQuote reads a live quote.
func (s *Store) GetQuote(nonce string) (Quote, error) {
	var q Quote
	err := s.view(func(txn *tx) error { return getRecord(txn, quoteKey(nonce), &q) })
	if err == nil && s.now().Sub(q.CreatedAt) > QuoteTTL {
		return Quote{}, ErrNotFound
	}
	return q, err
}

// TakeQuote deletes a quote and returns it; only one caller can take it.
func (s *Store) TakeQuote(nonce string) (Quote, error) {
	var q Quote
	err := s.update(func(txn *tx) error {
		if err := getRecord(txn, quoteKey(nonce), &q); err != nil {
			return err
		}
		return txn.Delete(quoteKey(nonce))
	})
	if errors.Is(err, ErrNotFound) || (err == nil && s.now().Sub(q.CreatedAt) > QuoteTTL) {
		return Quote{}, ErrNotFound
	}
	return q, err
}
