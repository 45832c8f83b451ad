package engine

import (
	"bytes"
	"crypto/rsa"
	"errors"
	"fmt"
	"html"
	"strings"
	"unicode"

	"golang.org/x/crypto/ssh"

	"github.com/hangarhq/hangar/store"
)

// maxSSHKeyLen bounds a pasted key: an RSA-16384 key is about 2.8 KB.
const maxSSHKeyLen = 8 << 10

// parseSSHKey reads the one public key a user pasted after /sshkey, in authorized_keys
// form. Options (command=…) are dropped, weak keys (DSA, RSA under 2048 bits) refused,
// and the comment kept only if it is short printable ASCII: the line is installed on
// servers as it is returned.
func parseSSHKey(user int64, text string) (store.UserSSHKey, error) {
	if len(text) > maxSSHKeyLen {
		return store.UserSSHKey{}, errors.New("that is too long for one public key")
	}
	pub, comment, _, rest, err := ssh.ParseAuthorizedKey([]byte(text))
	if err != nil {
		return store.UserSSHKey{}, errors.New("that is not an SSH public key (it starts with ssh-ed25519, ssh-rsa or ecdsa-sha2-…)")
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return store.UserSSHKey{}, errors.New("send one key at a time")
	}
	switch pub.Type() {
	case "ssh-dss": // ssh.KeyAlgoDSA, deprecated in x/crypto for the reason refused here
		return store.UserSSHKey{}, errors.New("DSA keys are too weak; use ssh-ed25519")
	case ssh.KeyAlgoRSA:
		if ck, ok := pub.(ssh.CryptoPublicKey); ok {
			if k, ok := ck.CryptoPublicKey().(*rsa.PublicKey); ok && k.N.BitLen() < 2048 {
				return store.UserSSHKey{}, fmt.Errorf("this RSA key has %d bits; use at least 2048, or ssh-ed25519", k.N.BitLen())
			}
		}
	}
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub)))
	if c := strings.TrimSpace(comment); c != "" && len(c) <= 64 && printableASCII(c) {
		line += " " + c
	}
	return store.UserSSHKey{UserID: user, Key: line, Fingerprint: ssh.FingerprintSHA256(pub)}, nil
}

func printableASCII(s string) bool {
	for _, r := range s {
		if r > unicode.MaxASCII || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// SSHKeyStore is what /sshkey reads and writes.
type SSHKeyStore interface {
	PutSSHKey(k store.UserSSHKey) error
	GetSSHKey(user int64) (store.UserSSHKey, error)
	DeleteSSHKey(user int64) error
}

// sshKey registers, shows or removes the user's public key.
func (b *bot) sshKey(chat, user int64, args string, out *botOutcome) {
	keys, ok := b.store.(SSHKeyStore)
	if !ok {
		out.sayT(chat, "SSHKeysOff")
		return
	}
	switch strings.ToLower(strings.TrimSpace(args)) {
	case "":
		k, err := keys.GetSSHKey(user)
		switch {
		case errors.Is(err, store.ErrNotFound):
			out.sayT(chat, "SSHKeyNone")
		case err != nil:
			out.sayT(chat, "SSHKeyUnreadable")
		default:
			out.sayT(chat, "SSHKeyShow", "Fingerprint", html.EscapeString(k.Fingerprint))
		}
		return
	case "remove", "delete":
		if err := keys.DeleteSSHKey(user); err != nil {
			out.sayT(chat, "SSHKeyRemoveFailed")
			return
		}
		out.sayT(chat, "SSHKeyRemoved")
		return
	}
	k, err := parseSSHKey(user, args)
	if err != nil {
		out.sayT(chat, "SSHKeyInvalid", "Error", html.EscapeString(upperFirst(err.Error())))
		return
	}
	if err := keys.PutSSHKey(k); err != nil {
		out.sayT(chat, "SSHKeySaveFailed")
		return
	}
	out.sayT(chat, "SSHKeyRegistered", "Fingerprint", html.EscapeString(k.Fingerprint))
}

// userSSHKeys returns the key the order's owner registered, if any; a store failure
// counts as none rather than holding the server back.
func userSSHKeys(st any, o store.Order) []string {
	keys, ok := st.(SSHKeyStore)
	if !ok {
		return nil
	}
	k, err := keys.GetSSHKey(o.TelegramUserID)
	if err != nil || k.Key == "" {
		return nil
	}
	return []string{k.Key}
}
