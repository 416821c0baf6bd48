#!/usr/bin/env bash
# What span export costs a media token (docs/DESIGN.md#span-export): the gate's
# CPU per request without --otlp-endpoint and with it, alternated round by
# round (cpu_per_request.sh), the spans sent to an nginx that answers every
# export 200 (the receiver's own CPU is not the gate's). Prints each round and
# the medians' ratio.
#
#   Benchmarks/gate-support/span_export_cost.sh BINARY [ROUNDS] [SECONDS]
set -euo pipefail
bin="$1"; rounds="${2:-6}"; seconds="${3:-3}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$(mktemp -d)"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$work/logs"
cat > "$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/logs/error.log warn;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $work;
  server {
    listen 127.0.0.1:$port;
    client_max_body_size 16m;
    location = /v1/traces { return 200; }
  }
}
CONF
nginx -c "$work/nginx.conf" -p "$work" -e "$work/logs/error.log"
trap 'kill $(cat "$work/nginx.pid") 2>/dev/null; rm -rf "$work"' EXIT
python3 "$here/mint_tokens.py" "$root/Samples/keys/test-rsa2048.pem" media 200000 "$work/media.txt"
export TOKENS="$work/media.txt"
for round in $(seq "$rounds"); do
  if [ $((round % 2)) -eq 1 ]; then order="off on"; else order="on off"; fi
  for side in $order; do
    if [ "$side" = on ]; then args="--otlp-endpoint http://127.0.0.1:$port"; else args=""; fi
    GATE_ARGS="$args" "$here/cpu_per_request.sh" "$bin" "export-$side" "$seconds"
  done
done | tee "$work/rounds.txt"
python3 - "$work/rounds.txt" <<'PY'
import re, statistics, sys
cpu = {"export-off": [], "export-on": []}
for line in open(sys.argv[1]):
    label, rest = line.split(" ", 1)
    cpu[label].append(float(re.search(r"([\d.]+) us CPU", rest).group(1)))
off, on = statistics.median(cpu["export-off"]), statistics.median(cpu["export-on"])
print(f"span export: {off:.1f} us CPU a media token without, {on:.1f} with (+{(on / off - 1) * 100:.1f} %), medians of {len(cpu['export-off'])} rounds")
PY
