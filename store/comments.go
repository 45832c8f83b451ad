package store

import (
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

const (
	// CommentCap bounds the comments kept. Comments are content, so none is trimmed
	// to make room: past the cap new ones are refused until an admin deletes some.
	CommentCap = 100_000
	// PasswordIterations is the PBKDF2-SHA256 work factor (seed 004).
	PasswordIterations = 100_000
	passwordSaltLen    = 16
	passwordKeyLen     = 32
	passwordScheme     = "pbkdf2-sha256"

	// BlogWriteLimit blog writes (comments, edits, deletes, inquiries) are allowed per
	// IP per BlogWriteWindow. Wrong-password guesses count, which throttles guessing.
	BlogWriteLimit  = 5
	BlogWriteWindow = time.Minute

	metaCommentCount = prefixMeta + "comment_count"
)

var (
	// ErrWrongPassword is returned when a comment's password does not match.
	ErrWrongPassword = errors.New("store: wrong comment password")
	// ErrCommentLimit is returned when CommentCap comments are stored.
	ErrCommentLimit = errors.New("store: comment store is full")
	// ErrPasswordBusy is returned, before anything is hashed or stored, when as many
	// comment passwords are being hashed and waiting as the process allows.
	ErrPasswordBusy = errors.New("store: too many comment passwords are being checked")
)

// passwordGate bounds PBKDF2 across the process: the per-address write limit counts
// an IPv6 /64 as one client, and a /48 holds 65,536 of them. Half the processors hash
// at once, at most passwordQueue more wait, and any beyond are refused at once.
var passwordGate = newWorkGate(max(1, runtime.GOMAXPROCS(0)/2), passwordQueue)

const passwordQueue = 64

// workGate lets run hashes at once and queue more wait for a turn.
type workGate struct {
	places chan struct{} // running and waiting
	turns  chan struct{} // running
}

func newWorkGate(run, queue int) *workGate {
	return &workGate{places: make(chan struct{}, run+queue), turns: make(chan struct{}, run)}
}

// tryEnter takes a place, or reports that none is free.
func (g *workGate) tryEnter() bool {
	select {
	case g.places <- struct{}{}:
		return true
	default:
		return false
	}
}

func (g *workGate) leave() { <-g.places }

// do runs fn in its turn, or returns ErrPasswordBusy when no place is free.
func (g *workGate) do(fn func()) error {
	if !g.tryEnter() {
		return ErrPasswordBusy
	}
	defer g.leave()
	g.turns <- struct{}{}
	defer func() { <-g.turns }()
	fn()
	return nil
}

// Comment is a stored comment. The password hash never leaves this package; the IP is
// here for the admin API and must be dropped by anything public.
type Comment struct {
	ID        uint64     `json:"id"`
	Slug      string     `json:"slug"`
	Name      string     `json:"name"`
	Content   string     `json:"content"`
	IP        string     `json:"ip"`
	CreatedAt time.Time  `json:"created_at"`
	EditedAt  *time.Time `json:"edited_at"`
}

type commentRecord struct {
	Comment
	PasswordHash string `json:"password_hash"`
}

// NewComment is what a visitor submits.
type NewComment struct {
	Slug     string
	Name     string
	Content  string
	Password string
	IP       string
}

// beforeCommentCommit, when set (tests only), runs in AddComment between the password's
// hash and the comment's commit.
var beforeCommentCommit func()

// AddComment hashes the password (PBKDF2, about tens of milliseconds by design) and
// stores the comment.
func (s *Store) AddComment(nc NewComment) (Comment, error) {
	if err := ValidateSlug(nc.Slug); err != nil {
		return Comment{}, err
	}
	var hash string
	var err error
	if gerr := passwordGate.do(func() { hash, err = hashPassword(nc.Password) }); gerr != nil {
		return Comment{}, gerr
	}
	if err != nil {
		return Comment{}, err
	}
	rec := commentRecord{
		Comment: Comment{
			Slug: nc.Slug, Name: nc.Name, Content: nc.Content, IP: nc.IP,
			CreatedAt: s.now().UTC().Truncate(time.Second),
		},
		PasswordHash: hash,
	}
	if hook := beforeCommentCommit; hook != nil {
		hook()
	}
	err = s.update(func(txn *tx) error {
		n, _, err := getU64(txn, []byte(metaCommentCount))
		if err != nil {
			return err
		}
		if n >= CommentCap {
			return ErrCommentLimit
		}
		// Numbered in the commit, which runs one at a time: ids follow the order
		// comments are stored in, so a client polling with ?after= misses none.
		id, err := s.nextSeq("comment")
		if err != nil {
			return err
		}
		rec.ID = id
		if err := putRecord(txn, commentKey(id), rec, 0); err != nil {
			return err
		}
		if err := txn.Set(commentSlugKey(nc.Slug, id), nil); err != nil {
			return err
		}
		return putU64(txn, []byte(metaCommentCount), n+1, 0)
	})
	return rec.Comment, err
}

// Comments returns up to limit comments of slug, oldest first.
func (s *Store) Comments(slug string, limit int) ([]Comment, error) {
	list, _, err := s.CommentsPage(slug, 0, limit, 0)
	return list, err
}

// CommentsPage returns slug's comments with ids above after, oldest first: up to limit
// of them, and, when maxBytes > 0, no more than fit in maxBytes of names and content
// (always at least one). more reports that comments follow the last one returned.
func (s *Store) CommentsPage(slug string, after uint64, limit, maxBytes int) (page []Comment, more bool, err error) {
	if err := ValidateSlug(slug); err != nil {
		return nil, false, err
	}
	page = []Comment{}
	if limit <= 0 {
		return page, false, nil
	}
	prefix := []byte(prefixCommentSlug + slug + "\x00")
	err = s.view(func(txn *tx) error {
		opts := badger.DefaultIteratorOptions
		opts.PrefetchValues = false
		opts.Prefix = prefix
		it := txn.NewIterator(opts)
		defer it.Close()
		seek := prefix
		if after > 0 {
			if after == math.MaxUint64 {
				return nil
			}
			seek = u64Key(string(prefix), after+1)
		}
		size := 0
		for it.Seek(seek); it.ValidForPrefix(prefix); it.Next() {
			var rec commentRecord
			err := getRecord(txn, commentKey(u64FromKey(string(prefix), it.Item().Key())), &rec)
			if errors.Is(err, ErrNotFound) {
				continue // deleted after its index entry was read
			}
			if err != nil {
				return err
			}
			size += len(rec.Name) + len(rec.Content)
			if len(page) == limit || (maxBytes > 0 && size > maxBytes && len(page) > 0) {
				more = true
				return nil
			}
			page = append(page, rec.Comment)
		}
		return nil
	})
	return page, more, err
}

// EditComment replaces the content of comment id on slug when password matches, and
// sets its edited_at.
func (s *Store) EditComment(slug string, id uint64, password, content string) (Comment, error) {
	var out Comment
	err := s.withCommentPassword(slug, id, password, func(txn *tx, rec commentRecord) error {
		now := s.now().UTC().Truncate(time.Second)
		rec.Content = content
		rec.EditedAt = &now
		out = rec.Comment
		return putRecord(txn, commentKey(id), rec, 0)
	})
	return out, err
}

// DeleteComment deletes comment id on slug when password matches.
func (s *Store) DeleteComment(slug string, id uint64, password string) error {
	return s.withCommentPassword(slug, id, password, func(txn *tx, rec commentRecord) error {
		return deleteComment(txn, rec)
	})
}

// withCommentPassword verifies the password outside any transaction (PBKDF2 is slow and
// must not hold one open), then runs fn on the record only if its hash is unchanged.
func (s *Store) withCommentPassword(slug string, id uint64, password string, fn func(*tx, commentRecord) error) error {
	var rec commentRecord
	if err := s.view(func(txn *tx) error { return getRecord(txn, commentKey(id), &rec) }); err != nil {
		return err
	}
	if rec.Slug != slug {
		return ErrNotFound
	}
	var match bool
	if err := passwordGate.do(func() { match = verifyPassword(rec.PasswordHash, password) }); err != nil {
		return err
	}
	if !match {
		return ErrWrongPassword
	}
	return s.update(func(txn *tx) error {
		var cur commentRecord
		if err := getRecord(txn, commentKey(id), &cur); err != nil {
			return err
		}
		if subtle.ConstantTimeCompare([]byte(cur.PasswordHash), []byte(rec.PasswordHash)) != 1 {
			return ErrWrongPassword
		}
		return fn(txn, cur)
	})
}

// AdminComments returns up to limit comments of every slug with ids below before (0:
// from the newest), newest first.
func (s *Store) AdminComments(limit int, before uint64) ([]Comment, error) {
	out := []Comment{}
	err := s.view(func(txn *tx) error {
		return scanPrefix(txn, prefixComment, true, func(key, val []byte) (bool, error) {
			if before != 0 && u64FromKey(prefixComment, key) >= before {
				return true, nil
			}
			var rec commentRecord
			if err := json.Unmarshal(val, &rec); err == nil {
				out = append(out, rec.Comment)
			}
			return len(out) < limit, nil
		})
	})
	return out, err
}

// AdminDeleteComment deletes any comment by id.
func (s *Store) AdminDeleteComment(id uint64) error {
	return s.update(func(txn *tx) error {
		var rec commentRecord
		if err := getRecord(txn, commentKey(id), &rec); err != nil {
			return err
		}
		return deleteComment(txn, rec)
	})
}

func deleteComment(txn *tx, rec commentRecord) error {
	if err := txn.Delete(commentKey(rec.ID)); err != nil {
		return err
	}
	if err := txn.Delete(commentSlugKey(rec.Slug, rec.ID)); err != nil {
		return err
	}
	n, _, err := getU64(txn, []byte(metaCommentCount))
	if err != nil || n == 0 {
		return err
	}
	return putU64(txn, []byte(metaCommentCount), n-1, 0)
}

// blogWindow is one IP's blog write window.
type blogWindow struct {
	Count   int   `json:"n"`
	ResetAt int64 `json:"reset"` // unix ns
}

// blogWindowYesterday is the client's write window kept under yesterday's salt, with
// its key, when one may still run (the day began less than a window ago); nil if none.
func blogWindowYesterday(txn *tx, client string, now time.Time) ([]byte, blogWindow, error) {
	midnight := now.Truncate(24 * time.Hour) // UTC days
	if now.Sub(midnight) >= BlogWriteWindow {
		return nil, blogWindow{}, nil
	}
	salt, err := daySalt(txn, midnight.Add(-time.Hour).Format(dayLayout), false)
	if err != nil || salt == nil {
		return nil, blogWindow{}, err
	}
	key := append([]byte(prefixBlogRate), ipHash(salt, client)...)
	var w blogWindow
	if err := getRecord(txn, key, &w); err != nil {
		if errors.Is(err, ErrNotFound) {
			err = nil
		}
		return nil, blogWindow{}, err
	}
	if w.ResetAt <= now.UnixNano() {
		return nil, blogWindow{}, nil
	}
	return key, w, nil
}

// AllowBlogWrite takes one of ip's (its IPv6 /64's) BlogWriteLimit writes in the
// current window. The window lives in the store with a TTL, so it survives a restart;
// its key holds the daily-salted hash of the IP, not the IP.
func (s *Store) AllowBlogWrite(ip string) (ok bool, retryAfter time.Duration, err error) {
	now := s.now().UTC()
	salt, err := s.todaysSalt(now.Format(dayLayout))
	if err != nil {
		return false, 0, err
	}
	// One window per client as the slug budget counts clients: an IPv6 /64 is one, or
	// a single subscriber would write without limit from its own addresses.
	client := clientNet(ip)
	key := append([]byte(prefixBlogRate), ipHash(salt, client)...)
	err = s.update(func(txn *tx) error {
		var w blogWindow
		if err := getRecord(txn, key, &w); err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		if w.ResetAt == 0 {
			// The key's salt changed at midnight: a window opened in the last minute
			// of yesterday still runs, under yesterday's salt.
			if k, y, err := blogWindowYesterday(txn, client, now); err != nil {
				return err
			} else if k != nil {
				key, w = k, y
			}
		}
		if w.ResetAt <= now.UnixNano() {
			w = blogWindow{ResetAt: now.Add(BlogWriteWindow).UnixNano()}
		}
		// A window cannot end more than a window from now: one that does was opened
		// before the clock stepped back, and would have run for the step's length more.
		// It is stored ending then, refused or not.
		stepped := w.ResetAt > now.Add(BlogWriteWindow).UnixNano()
		if stepped {
			w.ResetAt = now.Add(BlogWriteWindow).UnixNano()
		}
		reset := time.Unix(0, w.ResetAt)
		if w.Count >= BlogWriteLimit {
			ok, retryAfter = false, reset.Sub(now)
			if !stepped {
				return nil
			}
		} else {
			w.Count++
			ok, retryAfter = true, 0
		}
		// Badger TTLs have one-second resolution and run on the wall clock; the stored
		// reset time decides, the TTL only cleans up.
		return putRecord(txn, key, w, reset.Sub(now)+time.Second)
	})
	return ok, retryAfter, err
}

func hashPassword(password string) (string, error) {
	salt := make([]byte, passwordSaltLen)
	rand.Read(salt)
	key, err := pbkdf2.Key(sha256.New, password, salt, PasswordIterations, passwordKeyLen)
	if err != nil {
		return "", err
	}
	enc := base64.RawStdEncoding
	return fmt.Sprintf("%s$%d$%s$%s", passwordScheme, PasswordIterations, enc.EncodeToString(salt), enc.EncodeToString(key)), nil
}

// verifyPassword recomputes with the stored salt and work factor (so raising
// PasswordIterations later keeps old comments editable) and compares in constant time.
func verifyPassword(stored, password string) bool {
	parts := strings.Split(stored, "$")
	if len(parts) != 4 || parts[0] != passwordScheme {
		return false
	}
	iter, err := strconv.Atoi(parts[1])
	if err != nil || iter < 1 || iter > 10_000_000 {
		return false
	}
	enc := base64.RawStdEncoding
	salt, err1 := enc.DecodeString(parts[2])
	want, err2 := enc.DecodeString(parts[3])
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false
	}
	got, err := pbkdf2.Key(sha256.New, password, salt, iter, len(want))
	return err == nil && subtle.ConstantTimeCompare(got, want) == 1
}

func commentKey(id uint64) []byte { return u64Key(prefixComment, id) }

func commentSlugKey(slug string, id uint64) []byte {
	return u64Key(prefixCommentSlug+slug+"\x00", id)
}
