package main

import (
	"log/slog"
	"net"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hangarhq/hangar/tui"
	"github.com/hangarhq/hangar/tui/client"
)

// startConsoleSSH serves the operations console over SSH. The sessions talk to this
// daemon through its own admin API on loopback, exactly as `hangar console` does, so
// both consoles are the same code, but with this run's console token: the daemon then
// believes the role and the key (fingerprint and comment) each session names, and
// records that key in the audit log. An empty --ssh switches it off.
func startConsoleSSH(cfg serveConfig, httpAddr net.Addr, reg prometheus.Registerer, log *slog.Logger) (*tui.SSHServer, error) {
	if cfg.SSHAddr == "" {
		log.Info("SSH console off (--ssh is empty)")
		return nil, nil
	}
	base := "http://" + loopbackAddr(httpAddr)
	if _, err := client.New(base, cfg.Roles.console); err != nil {
		return nil, err
	}
	keys := cfg.AuthorizedKeys
	if keys == "" {
		keys = filepath.Join(cfg.DataDir, "authorized_keys")
	}
	viewers := cfg.Roles.ViewerKeys
	if viewers == "" {
		viewers = filepath.Join(cfg.DataDir, "viewer_keys")
	}
	s, err := tui.NewSSHServer(tui.SSHConfig{
		Addr:               cfg.SSHAddr,
		HostKeyPath:        filepath.Join(cfg.DataDir, "ssh_host_ed25519"),
		AuthorizedKeysPath: keys,
		ViewerKeysPath:     viewers,
		// A client per session (they share the default transport): each carries its
		// key's role and name.
		DaemonFor: func(id tui.Identity) (tui.Daemon, error) {
			return client.New(base, cfg.Roles.console, client.WithIdentity(id.Role, id.Actor()))
		},
		Target:           "hangar@" + httpAddr.String(),
		Logger:           log,
		MaxSessions:      cfg.MaxSSHSessions,
		HandshakeTimeout: cfg.SSHHandshakeTimeout,
		IdleTimeout:      cfg.SSHIdleTimeout,
		Registry:         reg,
	})
	if err != nil {
		return nil, err
	}
	if err := s.Start(); err != nil {
		return nil, err
	}
	log.Info("SSH console listening", "addr", s.Addr().String(), "authorized_keys", keys, "viewer_keys", viewers)
	return s, nil
}
