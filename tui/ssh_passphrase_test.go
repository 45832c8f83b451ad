package tui_test

import (
	"io"
	"net"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/hangarhq/hangar/tui"
)

// slowSigner is a key whose private half takes a while to reach: OpenSSH asks for the
// key's passphrase (or waits for a FIDO key's touch) only after the server has said
// the public key would do (SSH_MSG_USERAUTH_PK_OK), then signs.
type slowSigner struct {
	gossh.Signer
	delay time.Duration
}

func (s slowSigner) Sign(r io.Reader, data []byte) (*gossh.Signature, error) {
	time.Sleep(s.delay)
	return s.Signer.Sign(r, data)
}

// Only the first session channel marks a connection authenticated, so the handshake
// timeout also runs through the operator's passphrase prompt or key touch: a listed
// key offered gets PassphraseGrace (default 2 minutes, sshd's LoginGraceTime) more to
// be proven, and an operator typing a passphrase is not disconnected with a valid key.
func TestPassphrasePromptOutlastingTheHandshakeTimeout(t *testing.T) {
	r := startEdgeSSH(t, func(c *tui.SSHConfig) { c.HandshakeTimeout = 300 * time.Millisecond })
	conn, err := net.Dial("tcp", r.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	cc, chans, reqs, err := gossh.NewClientConn(conn, r.addr, &gossh.ClientConfig{
		User:            "operator",
		Auth:            []gossh.AuthMethod{gossh.PublicKeys(slowSigner{Signer: r.viewer, delay: time.Second})},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(),
	})
	if err != nil {
		t.Fatalf("login with a listed key whose passphrase took 1 s: %v (after %v)", err, time.Since(start).Round(time.Second))
	}
	c := gossh.NewClient(cc, chans, reqs)
	defer c.Close()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatalf("session after a slow passphrase: %v", err)
	}
	sess.Close()
}
