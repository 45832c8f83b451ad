# hangar — the two commands a newcomer needs are `make run` and `make test`.
GO       ?= go
BIN      := bin/hangar
# Development tokens so that `make run` accepts webhooks and console logins out of the
# box (only for run: tests set their own). Set HANGAR_* in the environment for
# anything real.
run: export HANGAR_WEBHOOK_SECRET ?= dev-webhook-secret
run: export HANGAR_ADMIN_TOKEN ?= dev-admin-token-change-me

.PHONY: run build test bench bench-anchors vet fmt clean

build:
	$(GO) build -o $(BIN) ./cmd/hangar

# --demo generates bot traffic, orders and blog views so the console has something to
# show; `make run ARGS=` runs hangar quiet.
ARGS ?= --demo
run: build
	./$(BIN) serve $(ARGS)

# internal/floor and the anchors in internal/bench/anchors are modules of their own
# (make bench builds them): vetted here so that they cannot rot unseen.
ANCHORS := fiberlimit fiberviews fiberasynq load
test:
	$(GO) vet ./...
	$(GO) vet -C internal/floor .
	for a in $(ANCHORS); do $(GO) vet -C internal/bench/anchors/$$a . || exit 1; done
	$(GO) test -race -count=1 -timeout 280s ./...

# Go benchmarks of the store alone (64 writers, fsync on) and of an order actor's
# lifecycle, then the load generator against the real HTTP stack on loopback, then
# hangar beside its peer anchors (Fiber + Redis, Fiber + asynq; they need redis-server:
# without it hangar is loaded alone and the install command is printed), ending with
# the ratios. BENCHARGS go to internal/bench (e.g. BENCHARGS='-only views -duration 5s',
# '-anchor-runs 5', '-cpuprofile cpu.prof'). See docs/performance.md.
bench:
	$(GO) test -run '^$$' -bench . -benchtime 3s ./store
	$(GO) test -run '^$$' -bench OrderActorLifecycle -benchtime 3s ./engine
	$(GO) run ./internal/bench $(BENCHARGS)

# Only the comparison with the anchors: about two minutes for three rounds.
bench-anchors:
	$(GO) run ./internal/bench -only anchors $(BENCHARGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin
