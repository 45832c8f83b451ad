package engine

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hangarhq/hangar/store"
)

const passwordAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"

// NewPasswordDeriver returns a function that derives an order's root password from a
// secret key: HMAC-SHA256(key, order id), spelled in an unambiguous alphabet. Anyone
// holding the key can recompute every password, so the daemon uses a Vault instead;
// the deriver remains for orders created before the vault (the old password.key) and
// for tests. A nil key means a random one for this process only.
func NewPasswordDeriver(key []byte) func(orderID int64) string {
	if len(key) == 0 {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			panic("engine: no randomness for the password key: " + err.Error())
		}
	}
	return func(orderID int64) string {
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte("hangar root password v1:" + strconv.FormatInt(orderID, 10)))
		n := new(big.Int).SetBytes(mac.Sum(nil))
		base := big.NewInt(int64(len(passwordAlphabet)))
		out := make([]byte, 20)
		mod := new(big.Int)
		for i := range out {
			n.DivMod(n, base, mod)
			out[i] = passwordAlphabet[mod.Int64()]
		}
		return string(out)
	}
}

// PasswordSource gives orders their root passwords (Config.Passwords).
type PasswordSource interface {
	// Issue returns the order's root password, making and keeping it (sealed) on first
	// use, so that a retried or resumed order sends the provider the same one.
	Issue(o store.Order) (string, error)
	// Reveal returns it for the message that carries it; ok is false once destroyed.
	Reveal(orderID int64) (pw string, ok bool, err error)
	// Sweep destroys what is no longer needed: passwords done more than window ago or
	// whose order is no longer live, and every key no kept password was sealed with.
	Sweep(now time.Time, window time.Duration, live func(orderID int64) bool) error
}

// derivedPasswords adapts a deriver (NewPasswordDeriver) to PasswordSource: nothing is
// kept, so there is nothing to destroy.
type derivedPasswords struct{ derive func(orderID int64) string }

func (d derivedPasswords) Issue(o store.Order) (string, error) { return d.derive(o.ID), nil }
func (d derivedPasswords) Reveal(id int64) (string, bool, error) {
	return d.derive(id), true, nil
}
func (derivedPasswords) Sweep(time.Time, time.Duration, func(int64) bool) error { return nil }

// passwords is the engine's password source: Config.Passwords, else the deriver.
func (e *Engine) passwords() PasswordSource {
	if e.cfg.Passwords != nil {
		return e.cfg.Passwords
	}
	return derivedPasswords{derive: e.cfg.Password}
}

// VaultStore keeps the sealed passwords.
type VaultStore interface {
	PutSealedPassword(p store.SealedPassword) error
	GetSealedPassword(orderID int64) (store.SealedPassword, error)
	DeleteSealedPassword(orderID int64) error
	SealedPasswords() ([]store.SealedPassword, error)
	DeleteSealedPasswords(orderIDs []int64) error
	GetOrder(id int64) (store.Order, error)
	VaultSince(fallback time.Time) (time.Time, error)
}

// vaultRotate is how long one key seals new passwords: a key is deleted once no kept
// password was sealed with it, so a copy of the data directory taken this long (plus
// the /password window) after a password was sent cannot recover it, even from the
// bytes the store's logs still hold of the deleted record.
const vaultRotate = 10 * time.Minute

// Vault gives each order a random root password (crypto/rand), keeps it only sealed
// (AES-256-GCM) in the store until its message was sent and the owner's /password
// window has passed, then deletes it, and deletes the key once no kept password
// needs it. The keys live in files of their own beside the store, never in it: a
// deleted file is gone, while a deleted store record lingers in the store's logs.
type Vault struct {
	dir          string
	st           VaultStore
	legacy       func(orderID int64) string
	legacyBefore time.Time

	// mu guards the keys. It is not held across store writes, so that many orders'
	// passwords share the store's group commits; pending counts the passwords sealed
	// with a key and not yet stored, which a sweep must not delete the key under.
	mu        sync.Mutex
	keys      map[uint64][]byte
	pending   map[uint64]int
	current   uint64
	currentAt time.Time
}

// OpenVault reads the keys in dir (creating it). legacyKey, when set, is the old
// password.key: orders created before the vault first opened keep the passwords it
// derives, so an order in flight across the upgrade sends the one its create used.
func OpenVault(dir string, st VaultStore, legacyKey []byte) (*Vault, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("vault: %w", err)
	}
	v := &Vault{dir: dir, st: st, keys: map[uint64][]byte{}, pending: map[uint64]int{}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("vault: %w", err)
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".key")
		epoch, err := strconv.ParseUint(name, 16, 64)
		if !ok || err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil || len(b) != 32 {
			return nil, fmt.Errorf("vault: key %s: unreadable or not 32 bytes", e.Name())
		}
		v.keys[epoch] = b
	}
	if len(legacyKey) > 0 {
		since, err := v.since()
		if err != nil {
			return nil, err
		}
		v.legacy, v.legacyBefore = NewPasswordDeriver(legacyKey), since
	}
	return v, nil
}

// since is when the vault first opened. It is kept in the store, which a restore
// brings back: kept only in the vault's directory, as versions before this one did, a
// restore without secrets/ moved it to the restore, and an order in flight then had its
// server created with a password derived from password.key, which the data directory
// holds. That file is read once, to carry an upgraded vault's time into the store.
func (v *Vault) since() (time.Time, error) {
	fallback := time.Now().UTC()
	if b, err := os.ReadFile(filepath.Join(v.dir, "since")); err == nil {
		t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b)))
		if err != nil {
			return time.Time{}, fmt.Errorf("vault: %s: %w", filepath.Join(v.dir, "since"), err)
		}
		fallback = t
	}
	since, err := v.st.VaultSince(fallback)
	if errors.Is(err, store.ErrInsufficientStorage) {
		// Below the free-space floor the store takes no writes, and a start must
		// still serve reads: this run goes by the fallback, and a later start with
		// room records it.
		return fallback, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("vault: %w", err)
	}
	return since, nil
}

// Issue returns the order's password, sealing a new random one on first use.
func (v *Vault) Issue(o store.Order) (string, error) {
	if v.isLegacy(o) {
		return v.legacy(o.ID), nil
	}
	// One attempt of an order runs at a time, so two Issues never race for one order.
	if pw, ok, err := v.Reveal(o.ID); err != nil || ok {
		return pw, err
	}
	pw, err := randomPassword()
	if err != nil {
		return "", err
	}
	v.mu.Lock()
	epoch, key, err := v.currentKey()
	if err == nil {
		v.pending[epoch]++
	}
	v.mu.Unlock()
	if err != nil {
		return "", err
	}
	defer func() {
		v.mu.Lock()
		if v.pending[epoch]--; v.pending[epoch] <= 0 {
			delete(v.pending, epoch)
		}
		v.mu.Unlock()
	}()
	sealed, err := seal(key, o.ID, pw)
	if err != nil {
		return "", err
	}
	if err := v.st.PutSealedPassword(store.SealedPassword{OrderID: o.ID, Epoch: epoch, Sealed: sealed}); err != nil {
		return "", err
	}
	return pw, nil
}

// passwordSealer is a PasswordSource that can seal new passwords into a commit the
// caller makes (the Vault): the dispatcher seals each first attempt's password in the
// commit that starts it, instead of Issue making a commit of its own per order.
type passwordSealer interface {
	// Sealer returns seal, which makes a new random password for an order and seals it
	// with the current key (ok false for an order it must not seal, and on failure),
	// and release, to be called once the commit that stores what seal returned has
	// ended: until then the key is not swept.
	Sealer() (seal func(o store.Order) (pw string, p store.SealedPassword, ok bool), release func(), err error)
}

// Sealer implements passwordSealer.
func (v *Vault) Sealer() (func(o store.Order) (string, store.SealedPassword, bool), func(), error) {
	v.mu.Lock()
	epoch, key, err := v.currentKey()
	if err == nil {
		v.pending[epoch]++
	}
	v.mu.Unlock()
	if err != nil {
		return nil, nil, err
	}
	release := func() {
		v.mu.Lock()
		if v.pending[epoch]--; v.pending[epoch] <= 0 {
			delete(v.pending, epoch)
		}
		v.mu.Unlock()
	}
	aead, err := gcm(key)
	if err != nil {
		release()
		return nil, nil, err
	}
	seal := func(o store.Order) (string, store.SealedPassword, bool) {
		if v.isLegacy(o) {
			return "", store.SealedPassword{}, false
		}
		pw, err := randomPassword()
		if err != nil {
			return "", store.SealedPassword{}, false
		}
		sealed, err := sealWith(aead, o.ID, pw)
		if err != nil {
			return "", store.SealedPassword{}, false
		}
		return pw, store.SealedPassword{OrderID: o.ID, Epoch: epoch, Sealed: sealed}, true
	}
	return seal, release, nil
}

func (v *Vault) isLegacy(o store.Order) bool {
	return v.legacy != nil && !o.CreatedAt.IsZero() && o.CreatedAt.Before(v.legacyBefore)
}

// Reveal opens the order's kept password.
func (v *Vault) Reveal(orderID int64) (string, bool, error) {
	pw, ok, sealed, err := v.reveal(orderID)
	if !ok && !sealed && err == nil && v.legacy != nil {
		// An order from before the vault: its password is derived, not kept. Never
		// one whose password was sealed: with its key gone (a data directory restored
		// without secrets/, whose vault then dates from the restore) the derived one
		// is not the server's, and the user must be told to reset it instead.
		if o, err := v.st.GetOrder(orderID); err == nil && v.isLegacy(o) {
			return v.legacy(orderID), true, nil
		}
	}
	return pw, ok, err
}

// reveal opens the order's sealed password; sealed says a sealed record exists (its
// key may be gone).
func (v *Vault) reveal(orderID int64) (pw string, ok, sealed bool, err error) {
	p, err := v.st.GetSealedPassword(orderID)
	if errors.Is(err, store.ErrNotFound) {
		return "", false, false, nil
	}
	if err != nil {
		return "", false, false, err
	}
	v.mu.Lock()
	key, ok := v.keys[p.Epoch]
	v.mu.Unlock()
	if !ok {
		return "", false, true, nil // its key is gone: as good as destroyed
	}
	pw, err = open(key, orderID, p.Sealed)
	if err != nil {
		return "", false, true, err
	}
	return pw, true, true, nil
}

// Sweep deletes the passwords no longer needed, then every key none of the rest needs.
func (v *Vault) Sweep(now time.Time, window time.Duration, live func(orderID int64) bool) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	all, err := v.st.SealedPasswords()
	if err != nil {
		return err
	}
	needed := map[uint64]bool{}
	var gone []int64
	for _, p := range all {
		if (!p.DoneAt.IsZero() && now.Sub(p.DoneAt) >= window) || !live(p.OrderID) {
			gone = append(gone, p.OrderID)
			continue
		}
		needed[p.Epoch] = true
	}
	if err := v.st.DeleteSealedPasswords(gone); err != nil {
		return err
	}
	for epoch := range v.keys {
		if needed[epoch] || v.pending[epoch] > 0 {
			continue
		}
		if err := os.Remove(filepath.Join(v.dir, keyName(epoch))); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("vault: %w", err)
		}
		delete(v.keys, epoch)
		if epoch == v.current {
			v.current = 0
		}
	}
	return syncDir(v.dir)
}

// Keys is how many keys the vault holds (for tests and health).
func (v *Vault) Keys() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.keys)
}

// currentKey returns the key new passwords are sealed with, making a new one when
// there is none or it has sealed for vaultRotate.
func (v *Vault) currentKey() (uint64, []byte, error) {
	if v.current != 0 && time.Since(v.currentAt) < vaultRotate {
		return v.current, v.keys[v.current], nil
	}
	epoch := uint64(time.Now().UnixNano())
	for _, taken := v.keys[epoch]; taken; _, taken = v.keys[epoch] {
		epoch++
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return 0, nil, err
	}
	if err := writeFileSynced(filepath.Join(v.dir, keyName(epoch)), key); err != nil {
		return 0, nil, fmt.Errorf("vault: %w", err)
	}
	v.keys[epoch], v.current, v.currentAt = key, epoch, time.Now()
	return epoch, key, nil
}

func keyName(epoch uint64) string { return fmt.Sprintf("%016x.key", epoch) }

// randomPassword draws 20 characters uniformly from the alphabet. A byte is used only
// below the largest multiple of the alphabet's size, so every character is equally
// likely; one read of random bytes serves the whole password (rand.Int per character
// cost two big.Int allocations and a read each, 2 % of an order's CPU).
func randomPassword() (string, error) {
	const n = len(passwordAlphabet)
	const limit = 256 / n * n
	out := make([]byte, 0, 20)
	var buf [32]byte
	for len(out) < cap(out) {
		if _, err := rand.Read(buf[:]); err != nil {
			return "", err
		}
		for _, b := range buf {
			if int(b) < limit && len(out) < cap(out) {
				out = append(out, passwordAlphabet[int(b)%n])
			}
		}
	}
	return string(out), nil
}

func seal(key []byte, orderID int64, pw string) ([]byte, error) {
	aead, err := gcm(key)
	if err != nil {
		return nil, err
	}
	return sealWith(aead, orderID, pw)
}

func sealWith(aead cipher.AEAD, orderID int64, pw string) ([]byte, error) {
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return aead.Seal(nonce, nonce, []byte(pw), binary.BigEndian.AppendUint64(nil, uint64(orderID))), nil
}

func open(key []byte, orderID int64, sealed []byte) (string, error) {
	aead, err := gcm(key)
	if err != nil {
		return "", err
	}
	if len(sealed) < aead.NonceSize() {
		return "", errors.New("vault: sealed password too short")
	}
	pt, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], binary.BigEndian.AppendUint64(nil, uint64(orderID)))
	if err != nil {
		return "", errors.New("vault: a sealed password does not open")
	}
	return string(pt), nil
}

func gcm(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// writeFileSynced writes a file (0600) and its directory entry durably.
func writeFileSynced(path string, b []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

var (
	_ PasswordSource = (*Vault)(nil)
	_ PasswordSource = derivedPasswords{}
	_ passwordSealer = (*Vault)(nil)
)
