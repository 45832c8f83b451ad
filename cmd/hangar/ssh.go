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
// both consoles are the same code. An empty --ssh switches it off.
func startConsoleSSH(cfg serveConfig, httpAddr net.Addr, reg prometheus.Registerer, log *slog.Logger) (*tui.SSHServer, error) {
	if cfg.SSHAddr == "" {
		log.Info("SSH console off (--ssh is empty)")
		return nil, nil
	}
	if cfg.AdminToken == "" {
		log.Warn("SSH console: no admin token, so sessions will show the daemon refusing the console")
	}
	daemon, err := client.New("http://"+loopbackAddr(httpAddr), cfg.AdminToken)
	if err != nil {
		return nil, err
	}
	keys := cfg.AuthorizedKeys
	if keys == "" {
		keys = filepath.Join(cfg.DataDir, "authorized_keys")
	}
	s, err := tui.NewSSHServer(tui.SSHConfig{
		Addr:               cfg.SSHAddr,
		HostKeyPath:        filepath.Join(cfg.DataDir, "ssh_host_ed25519"),
		AuthorizedKeysPath: keys,
		Daemon:             func() (tui.Daemon, error) { return daemon, nil },
		Target:             "hangar@" + httpAddr.String(),
		Logger:             log,
		MaxSessions:        cfg.MaxSSHSessions,
		HandshakeTimeout:   cfg.SSHHandshakeTimeout,
		IdleTimeout:        cfg.SSHIdleTimeout,
		Registry:           reg,
	})
	if err != nil {
		return nil, err
	}
	if err := s.Start(); err != nil {
		return nil, err
	}
	log.Info("SSH console listening", "addr", s.Addr().String(), "authorized_keys", keys)
	return s, nil
}
