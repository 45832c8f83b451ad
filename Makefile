# hangar — the two commands a newcomer needs are `make run` and `make test`.
GO       ?= go
BIN      := bin/hangar
# Development tokens so that `make run` accepts webhooks and console logins out of the
# box (only for run: tests set their own). Set HANGAR_* in the environment for
# anything real.
run: export HANGAR_WEBHOOK_SECRET ?= dev-webhook-secret
run: export HANGAR_ADMIN_TOKEN ?= dev-admin-token-change-me

.PHONY: run build test bench vet fmt clean

build:
	$(GO) build -o $(BIN) ./cmd/hangar

# --demo generates bot traffic, orders and blog views so the console has something to
# show; `make run ARGS=` runs hangar quiet.
ARGS ?= --demo
run: build
	./$(BIN) serve $(ARGS)

# internal/floor is a module of its own (make bench builds it): vetted here so that it
# cannot rot unseen.
test:
	$(GO) vet ./...
	$(GO) vet -C internal/floor .
	$(GO) test -race -count=1 -timeout 280s ./...

# Go benchmarks of the store alone (64 writers, fsync on) and of an order actor's
# lifecycle, then the load generator against the real HTTP stack on loopback. BENCHARGS go to the load generator
# (e.g. BENCHARGS='-only views -duration 5s').
bench:
	$(GO) test -run '^$$' -bench . -benchtime 3s ./store
	$(GO) test -run '^$$' -bench OrderActorLifecycle -benchtime 3s ./engine
	$(GO) run ./internal/bench $(BENCHARGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin
