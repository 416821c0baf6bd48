#!/usr/bin/env bash
# One A/B sample of a tokengate binary: a fresh gate (in-memory store, the
# test-only key), wrk -t2 -c16 for SECONDS with a distinct media token per
# request from TOKENS (gate-support/mint_tokens.py; valid 7 minutes), and the
# gate's CPU per request: its utime + stime over the run, from /proc, divided
# by the requests wrk completed. Alternate two binaries round by round: on a
# shared machine the CPU per request moves less than the rate does.
# MODE=session makes every request a segment request carrying the session
# credential the gate issued for the list's last token, MODE=plain the plain
# route (`/healthz`): Benchmarks/gate's figure 5 and its baseline.
# PIN=1 pins the gate to core 0 and runs `wrk -t1` on core 1, so the load
# generator never shares the gate's core (the issue 48 method).
#
#   TOKENS=media.txt [MODE=media|session|plain] [PIN=1] [GATE_ARGS="--otlp-endpoint …"] Benchmarks/gate-support/cpu_per_request.sh BINARY LABEL [SECONDS]
set -euo pipefail
bin="$1"; label="$2"; seconds="${3:-3}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/session.key"
chmod 600 "$work/session.key"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
gate_pin=(); wrk_pin=(); threads=2
if [ "${PIN:-0}" = 1 ] && [ "$(nproc)" -ge 2 ]; then gate_pin=(taskset -c 0); wrk_pin=(taskset -c 1); threads=1; fi
${gate_pin[@]+"${gate_pin[@]}"} "$bin" serve --key "$root/Samples/keys/trusted" --requestor TNT --resource-header X-Token-Resource \
  --listen "127.0.0.1:$port" --session-secret "$work/session.key" ${GATE_ARGS:-} >"$work/gate.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
path=/v1/auth-request
case "${MODE:-media}" in
session)
  session=$(curl -s -D - -o /dev/null -H "X-Original-URI: /hls/tnt/a.ts?token=$(tail -1 "$TOKENS")" \
    -H "X-Token-Resource: TNT" "http://127.0.0.1:$port/v1/auth-request" | awk -F': ' 'tolower($1)=="x-token-session" {print $2}' | tr -d '\r')
  [ -n "$session" ] || { echo "cpu_per_request: the gate issued no session credential" >&2; exit 1; }
  load=(-H "Cookie: tokengate_session=$session" -H "X-Original-URI: /hls/tnt/seg.ts" -H "X-Token-Resource: TNT") ;;
plain) load=(); path=/healthz ;;
media) load=(-s "$here/tokens.lua") ;;
*) echo "cpu_per_request: MODE is media, session or plain" >&2; exit 2 ;;
esac
before=$(ticks)
THREADS=$threads ${wrk_pin[@]+"${wrk_pin[@]}"} wrk -t"$threads" -c16 -d"${seconds}s" ${load[@]+"${load[@]}"} "http://127.0.0.1:$port$path" > "$work/wrk.txt"
after=$(ticks)
kill "$pid"; wait "$pid" 2>/dev/null || true
requests=$(awk '/requests in/ {print $1}' "$work/wrk.txt")
rate=$(awk '/Requests\/sec/ {print $2}' "$work/wrk.txt")
non2xx=$(awk -F= '/^non2xx/ {print $2}' "$work/wrk.txt")
[ -n "$non2xx" ] || non2xx=$(awk -F': *' '/Non-2xx or 3xx responses/ {print $2}' "$work/wrk.txt")
python3 -c "print(f'$label {float($rate):.0f} req/s, {($after - $before) / $(getconf CLK_TCK) / $requests * 1e6:.1f} us CPU a request, non-2xx ${non2xx:-0} of $requests')"
