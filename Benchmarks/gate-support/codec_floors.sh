#!/usr/bin/env bash
# The gate against the limit server, divided by the codec (docs/PERFORMANCE.md,
# "The limit server with NIO's codec"): one pinned core, the same media tokens
# and the same job answered four ways, round by round:
#   bytes      limit-server (the limit that decides): heads cut from the bytes
#   nio        limit-server --codec nio: NIO's HTTP/1 server codec
#   httptypes  limit-server --codec httptypes: the same, heads and answers
#              converted to and from HTTPTypes as the gate converts them
#   gate       tokengate with a session secret (a session minted on every
#              allow, as operators run it)
# Each server is pinned to core 0 with `wrk -t1 -c16` on core 1 (the issue 48
# method), 1,000 distinct media tokens cycled with `--replay off`, so every
# request verifies in full. The order of the four turns by one each round, so
# none always runs in another's wake. A figure is the median of the rounds'
# ratios (min-max beside it); the servers' CPU per request comes from /proc.
#
#   Benchmarks/gate-support/codec_floors.sh [ROUNDS] [SECONDS]     default 5 rounds of 4 s
#
# Reads: gate / bytes is the figure that decides (target >= 0.85); httptypes / bytes
# is what NIO's codec and HTTPTypes alone leave of the limit, the most any gate
# that reads with them can reach; gate / httptypes is the gate's own work
# against that floor.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
rounds="${1:-5}"; seconds="${2:-4}"
[ "$(nproc)" -ge 2 ] || { echo "codec_floors: needs two cores (the server on one, wrk on the other)" >&2; exit 2; }
command -v wrk >/dev/null || { echo "codec_floors: wrk is not installed (apt-get install wrk)" >&2; exit 2; }
work="$(mktemp -d)"
pids=()
cleanup() { for pid in ${pids[@]+"${pids[@]}"}; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

bin="$("$root/scripts/release" --binaries)"
(cd "$root" && swift build -c release --package-path Benchmarks --product limit-server >"$work/build.log" 2>&1) \
  || { cat "$work/build.log" >&2; exit 1; }
limit="$root/Benchmarks/.build/release/limit-server"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/session.key"
chmod 600 "$work/session.key"
python3 "$here/mint_tokens.py" "$root/Samples/keys/test-rsa2048.pem" media 1000 "$work/tokens.txt"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
run() {  # which -> "rate cpu_us_per_request"
  local which=$1 port pid before after
  port=$(free_port)
  case "$which" in
    gate)
      taskset -c 0 "$bin/tokengate" serve --key "$root/Samples/keys/trusted" --requestor TNT --resource-header X-Token-Resource \
        --listen "127.0.0.1:$port" --replay off --session-secret "$work/session.key" >"$work/$which.log" 2>&1 & ;;
    *)
      taskset -c 0 "$limit" --listen "127.0.0.1:$port" --key "$root/Samples/keys/trusted" --requestor TNT --resource TNT \
        --replay off --codec "$which" >"$work/$which.log" 2>&1 & ;;
  esac
  pid=$!; pids+=("$pid")
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
  before=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  TOKENS="$work/tokens.txt" THREADS=1 taskset -c 1 wrk -t1 -c16 -d"${seconds}s" -s "$here/tokens.lua" \
    "http://127.0.0.1:$port/v1/auth-request" > "$work/wrk.txt"
  after=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  if grep -q 'Non-2xx' "$work/wrk.txt"; then
    echo "codec_floors: $which answered non-2xx: $(grep 'Non-2xx' "$work/wrk.txt")" >&2; cat "$work/$which.log" >&2; exit 1
  fi
  awk -v ticks="$((after - before))" -v hz="$(getconf CLK_TCK)" '
    /requests in/ {requests = $1} /Requests\/sec/ {rate = $2}
    END {printf "%.0f %.1f\n", rate, ticks / hz / requests * 1e6}' "$work/wrk.txt"
}

servers=(bytes nio httptypes gate)
: > "$work/rounds.txt"
for round in $(seq "$rounds"); do
  line="$round"
  for step in 0 1 2 3; do
    which=${servers[$(( (step + round - 1) % 4 ))]}
    read -r rate cpu < <(run "$which")
    line+=" $which=$rate/$cpu"
  done
  echo "round $line" >&2
  echo "$line" >> "$work/rounds.txt"
done

python3 - "$work/rounds.txt" <<'EOF'
import statistics, sys
rounds = []
for line in open(sys.argv[1]):
    fields = dict(item.split("=") for item in line.split()[1:])
    rounds.append({name: tuple(map(float, value.split("/"))) for name, value in fields.items()})
def show(label, values, unit=""):
    print(f"{label:<50} {statistics.median(values):>6.2f}{unit}  ({min(values):.2f}–{max(values):.2f})")
for name in ("bytes", "nio", "httptypes", "gate"):
    rates = [r[name][0] for r in rounds]; cpu = [r[name][1] for r in rounds]
    print(f"{name:<12} {statistics.median(rates):>8.0f} req/s ({min(rates):.0f}–{max(rates):.0f}), "
          f"{statistics.median(cpu):.1f} µs CPU a request ({min(cpu):.1f}–{max(cpu):.1f})")
show("nio / bytes (NIO's HTTP/1 codec)", [r["nio"][0] / r["bytes"][0] for r in rounds])
show("httptypes / bytes (and HTTPTypes)", [r["httptypes"][0] / r["bytes"][0] for r in rounds])
show("gate / bytes (the figure that decides, >= 0.85)", [r["gate"][0] / r["bytes"][0] for r in rounds])
show("gate / httptypes (the gate's own work)", [r["gate"][0] / r["httptypes"][0] for r in rounds])
EOF
