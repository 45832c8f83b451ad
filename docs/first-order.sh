#!/bin/sh
# Your first order: credit a user, order a simulated server for them, and follow the
# order until the server is running. Run it beside `make run` (another terminal):
#
#     sh docs/first-order.sh
#
# It reads the same HANGAR_* settings as `hangar serve`, with `make run`'s development
# defaults, so it works as is against `make run` and with your own exports otherwise.
# cmd/hangar/first_order_test.go runs it against a real `hangar serve`, so the README
# (which shows these commands) cannot drift from what works.
set -eu

export HANGAR_WEBHOOK_SECRET="${HANGAR_WEBHOOK_SECRET:-dev-webhook-secret}"
export HANGAR_ADMIN_TOKEN="${HANGAR_ADMIN_TOKEN:-dev-admin-token-change-me}"
export HANGAR_HTTP_ADDR="${HANGAR_HTTP_ADDR:-127.0.0.1:8080}"
# How long to wait for the server (the default simulator takes 15-30 s, and retries).
timeout="${FIRST_ORDER_TIMEOUT:-180}"

step() { printf '\n== %s\n' "$*"; }

step "is hangar up? (GET /health)"
curl -sS --fail-with-body "$HANGAR_HTTP_ADDR/health"

step "credit user 1 with 10000 (admin API; the same as: hangar deposit --user 1 --amount 10000)"
curl -sS --fail-with-body -X POST "$HANGAR_HTTP_ADDR/admin/users/1/deposit" -H "Authorization: Bearer $HANGAR_ADMIN_TOKEN" -d '{"amount": 10000}'

step "order a sim-nano in tokyo for user 1, whose Telegram id is 42 (POST /orders)"
order=$(curl -sS --fail-with-body -X POST "$HANGAR_HTTP_ADDR/orders" -H "Authorization: Bearer $HANGAR_WEBHOOK_SECRET" -d '{"user_id": 1, "telegram_user_id": "42", "spec_id": "sim-nano", "region": "tokyo"}')
echo "$order"
id=$(echo "$order" | sed -n 's/.*"order_id": *\([0-9][0-9]*\).*/\1/p')
[ -n "$id" ] || { echo "no order_id in the answer" >&2; exit 1; }

step "follow order $id until its server runs (GET /status/$id)"
waited=0
while :; do
	status=$(curl -sS --fail-with-body "$HANGAR_HTTP_ADDR/status/$id" -H "Authorization: Bearer $HANGAR_WEBHOOK_SECRET")
	state=$(echo "$status" | sed -n 's/.*"status": *"\([a-z]*\)".*/\1/p')
	echo "$(date +%T) $state"
	case "$state" in
	active) break ;;
	failed | cancelled | terminated) echo "$status" >&2; exit 1 ;;
	esac
	if [ "$waited" -ge "$timeout" ]; then
		echo "order $id is still $state after ${timeout}s" >&2
		exit 1
	fi
	sleep 2
	waited=$((waited + 2))
done
echo "$status"

step "done: order $id is active; its price was captured from user 1's balance"
curl -sS --fail-with-body "$HANGAR_HTTP_ADDR/admin/users/1" -H "Authorization: Bearer $HANGAR_ADMIN_TOKEN"
echo
echo
echo "The message with the IP and root password went to Telegram user 42; with sending off"
echo "it is in the outbox:  ./bin/hangar telegram outbox --chat 42"
echo "Watch it all live:    ./bin/hangar console"
