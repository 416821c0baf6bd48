#!/usr/bin/env bash
# What span export costs a media token (docs/DESIGN.md#span-export): the gate's
# CPU per request without --otlp-endpoint and with it, alternated round by
# round (cpu_per_request.sh), the spans sent to an nginx that answers every
# export 200 (the receiver's own CPU is not the gate's). With RATIOS (default
# "1"), export on is measured at each --trace-sample-ratio named; the sides'
# order rotates round by round. With BASELINE, a second binary's sides run in
# the same rounds, so two builds are compared on the same minutes. The gate is
# pinned to core 0 and wrk to core 1 (PIN=0: neither pinned, `wrk -t2`).
# Prints each round and each ratio's cost against the same binary's export off
# in the same round, the median of those paired ratios and their range.
# Media tokens are valid 7 minutes: keep ROUNDS × sides × (SECONDS + ~5 s) under that.
#
#   [RATIOS="1 0.1 0.01"] [BASELINE=OTHER_BINARY] [PIN=0] Benchmarks/gate-support/span_export_cost.sh BINARY [ROUNDS] [SECONDS]
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
sides=(off)
for ratio in ${RATIOS:-1}; do sides+=("$ratio"); done
builds=("$bin")
[ -n "${BASELINE:-}" ] && builds+=("$BASELINE")
runs=()
for build in "${!builds[@]}"; do for side in "${sides[@]}"; do runs+=("$build:$side"); done; done
export PIN="${PIN:-1}"
for round in $(seq "$rounds"); do
  # Each round starts one run further on, so no run always goes first.
  for i in "${!runs[@]}"; do
    run="${runs[$(( (i + round) % ${#runs[@]} ))]}"
    build="${run%%:*}"; side="${run#*:}"
    prefix=""; [ "$build" = 1 ] && prefix="baseline-"
    # Ratio 1 is the default, given without the option (so a gate older than it runs too).
    case "$side" in
    off) args="" ;;
    1) args="--otlp-endpoint http://127.0.0.1:$port" ;;
    *) args="--otlp-endpoint http://127.0.0.1:$port --trace-sample-ratio $side" ;;
    esac
    GATE_ARGS="$args" "$here/cpu_per_request.sh" "${builds[$build]}" "${prefix}export-$side" "$seconds"
  done
done | tee "$work/rounds.txt"
python3 - "$work/rounds.txt" "${#runs[@]}" <<'PY'
import re, statistics, sys
lines = [line for line in open(sys.argv[1]) if " us CPU" in line]
per_round = int(sys.argv[2])
rounds = [lines[i:i + per_round] for i in range(0, len(lines), per_round)]
# Paired: each ratio against the same binary's export off in the same round, so
# a round the machine ran slow moves both sides; the median of those ratios is printed.
paired, cpu = {}, {}
for round_lines in rounds:
    seen = {}
    for line in round_lines:
        label, rest = line.split(" ", 1)
        seen[label] = float(re.search(r"([\d.]+) us CPU", rest).group(1))
        cpu.setdefault(label, []).append(seen[label])
        if re.search(r"non-2xx (\d+)", rest).group(1) != "0":
            sys.exit(f"span_export_cost: {label} answered non-2xx (tokens expired?): {line.strip()}")
    for label, value in seen.items():
        prefix = "baseline-" if label.startswith("baseline-") else ""
        if label != prefix + "export-off":
            paired.setdefault(label, []).append(value / seen[prefix + "export-off"])
for label, ratios in paired.items():
    prefix = "baseline-" if label.startswith("baseline-") else ""
    build = "baseline" if prefix else "binary"
    ratio = label.removeprefix(prefix + "export-")
    off = statistics.median(cpu[prefix + "export-off"])
    cost = (statistics.median(ratios) - 1) * 100
    print(f"{build}: span export at ratio {ratio}: {cost:+.1f} % CPU a media token (median of {len(ratios)} paired rounds, "
          f"{(min(ratios) - 1) * 100:+.1f} … {(max(ratios) - 1) * 100:+.1f} %; medians {off:.1f} us without, {statistics.median(cpu[label]):.1f} us with)")
PY
