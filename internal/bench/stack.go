package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/engine/telegram"
	hangarhttp "github.com/hangarhq/hangar/http"
	"github.com/hangarhq/hangar/store"
)

// serveStack is the store, engine and HTTP server of `hangar serve`, in process, in a
// temp dir, wired as cmd/hangar/serve.go wires them.
type serveStack struct {
	spec  stackSpec
	dir   string
	log   *mutableHandler
	store *store.Store
	eng   *engine.Engine
	addr  string
	stop  func()
}

// stackSpec is what a scenario sets of its stack.
type stackSpec struct {
	name   string // of the temp dir
	engine func(s *serveStack, log *slog.Logger, reg *prometheus.Registry) (engine.Config, error)
	http   func(log *slog.Logger, reg *prometheus.Registry) hangarhttp.Config
	deps   func(s *serveStack) hangarhttp.Deps
	// timeStop prints how long engine.Stop took.
	timeStop bool
}

func startServeStack(spec stackSpec) (*serveStack, error) {
	dir, err := os.MkdirTemp("", "hangar-bench-"+spec.name+"-")
	if err != nil {
		return nil, err
	}
	s := &serveStack{spec: spec, dir: dir, log: newMutableHandler(slog.LevelWarn)}
	if err := s.start(slog.New(s.log)); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *serveStack) start(log *slog.Logger) error {
	var err error
	s.store, err = store.Open(store.Options{Dir: filepath.Join(s.dir, "db"), SyncWrites: true, Logger: log})
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	ecfg, err := s.spec.engine(s, log, reg)
	if err != nil {
		return err
	}
	s.eng, err = engine.New(ecfg, s.store, telegram.Off{})
	if err != nil {
		return err
	}
	if err := s.eng.Start(); err != nil {
		s.eng = nil
		return err
	}
	s.addr, s.stop, err = serveHTTP(hangarhttp.New(s.spec.http(log, reg), s.spec.deps(s)))
	return err
}

// close shuts down in serve's order: HTTP, engine, store; then removes the temp dir.
func (s *serveStack) close() {
	if s.stop != nil {
		s.stop()
	}
	if s.eng != nil {
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), engineStopTimeout)
		s.eng.Stop(ctx)
		cancel()
		if s.spec.timeStop {
			fmt.Printf("  %-24s %9s   (timeout %s)\n", "engine.Stop took", fmtDur(time.Since(start)), engineStopTimeout)
		}
	}
	// Whatever the engine logs from here on comes from actors still running after Stop
	// returned: count it rather than bury the figures under one error per message.
	s.log.mute()
	if s.store != nil {
		_ = s.store.Close()
	}
	_ = os.RemoveAll(s.dir)
	// Leftover actors would steal CPU from what runs next: wait until they fall silent.
	if n := s.log.waitQuiet(200*time.Millisecond, 10*time.Second); n > 0 {
		fmt.Printf("  %-24s %9d   log records from actors still running after engine.Stop (store closed under them)\n",
			"after-stop errors", n)
	}
}
