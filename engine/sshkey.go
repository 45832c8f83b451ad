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
	case ssh.KeyAlgoDSA:
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
		out.say(chat, "SSH keys cannot be registered here.")
		return
	}
	switch strings.ToLower(strings.TrimSpace(args)) {
	case "":
		k, err := keys.GetSSHKey(user)
		switch {
		case errors.Is(err, store.ErrNotFound):
			out.say(chat, "You have no SSH key registered. Send <code>/sshkey ssh-ed25519 AAAA… you@laptop</code> (the contents of your <code>~/.ssh/id_ed25519.pub</code>) and your next servers are created with it.")
		case err != nil:
			out.say(chat, "Your SSH key cannot be read right now; please try again.")
		default:
			out.say(chat, "Your SSH key: <code>%s</code>\nNew servers are created with it. <code>/sshkey remove</code> forgets it.", html.EscapeString(k.Fingerprint))
		}
		return
	case "remove", "delete":
		if err := keys.DeleteSSHKey(user); err != nil {
			out.say(chat, "Your SSH key could not be removed right now; please try again.")
			return
		}
		out.say(chat, "Your SSH key is forgotten; servers already created keep it.")
		return
	}
	k, err := parseSSHKey(user, args)
	if err != nil {
		out.say(chat, "%s.", html.EscapeString(upperFirst(err.Error())))
		return
	}
	if err := keys.PutSSHKey(k); err != nil {
		out.say(chat, "Your SSH key could not be saved right now; please try again.")
		return
	}
	out.say(chat, "🔑 SSH key <code>%s</code> registered. Servers you order from now on are created with it: log in with <code>ssh root@&lt;ip&gt;</code>. The root password still works until you switch password login off (<code>PasswordAuthentication no</code>).",
		html.EscapeString(k.Fingerprint))
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
