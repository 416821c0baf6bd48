#!/usr/bin/env bash
# The gate's instructions per request, counted by callgrind: auth-request
# allows and each HMAC kind's exchanges, with the token in a JSON body (POST
# /v1/playback) and in the query (GET /v1/playback?token=…, a player's
# redirect), on the release
# binary scripts/release packs, one keep-alive connection, 1,000 distinct
# media tokens a run with `--replay off`, so every request verifies in full.
# On this machine a rate moves by a tenth between minutes; an instruction count
# moves by less than 0.1 %, so an A/B of a few thousand instructions (a
# microsecond or two) shows here when Benchmarks/cdn cannot (docs/PERFORMANCE.md,
# "An exchange in instructions").
#
#   Benchmarks/gate-support/exchange_instructions.sh [TOKENGATE] [KIND...]
#     TOKENGATE  default: the release build (scripts/release --binaries)
#     KIND       akamai, cat-mac0, secure-link (default: all three)
#
# Each figure is (count after 600 requests − count after 100) ÷ 500, counted
# only while the requests run (callgrind_control turns instrumentation on and
# off), so start-up and the first requests' caches cancel out. It counts user
# space only: the kernel's reads and sends, which an allow and an exchange
# share, are not in it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$(cd "$here/.." && pwd)/work/exchange-instructions"
command -v valgrind >/dev/null || { echo "exchange_instructions: valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
binary="${1:-}"
[ $# -gt 0 ] && shift
[ -n "$binary" ] || binary="$("$root/scripts/release" --binaries)/tokengate"
kinds=("$@")
[ ${#kinds[@]} -gt 0 ] || kinds=(akamai cat-mac0 secure-link)

rm -rf "$work" && mkdir -p "$work"
# Valgrind 3.19 (Debian 12) cannot read the DWARF 5 the Swift toolchain writes;
# the symbol table it needs for names stays.
strip --strip-debug -o "$work/tokengate" "$binary"
openssl rand -hex 32 > "$work/hmac.key"
profile() {  # name kind key [extra line]
  { printf 'name = %s\nkind = %s\nkey = %s\nresource = TNT https://edge.media.test/hls/tnt/master.m3u8\n' "$1" "$2" "$3"
    if [ $# -gt 3 ]; then printf '%s\n' "$4"; fi; } > "$work/$1.profile"
}
profile akamai akamai "$work/hmac.key"
profile cat-mac0 cat "$work/hmac.key bench-mac"
profile secure-link nginx-secure-link "$work/hmac.key" 'secure-link-md5 = $secure_link_expires$folder $secret'

# One connection, one request at a time: a request's instructions do not
# depend on how many others wait.
cat > "$work/client.py" <<'EOF'
import http.client, sys
port, what, kind, tokens, first, count = int(sys.argv[1]), sys.argv[2], sys.argv[3], open(sys.argv[4]).read().split(), int(sys.argv[5]), int(sys.argv[6])
connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
for token in tokens[first:first + count]:
    if what == "allow":
        connection.request("GET", "/v1/auth-request", headers={"X-Original-URI": "/hls/tnt/seg.ts?token=" + token, "X-Token-Resource": "TNT"})
    elif what == "get":
        connection.request("GET", "/v1/playback?token=%s&resource=TNT&profile=%s" % (token, kind))
    else:
        body = '{"token":"%s","resource":"TNT","profile":"%s"}' % (token, kind)
        connection.request("POST", "/v1/playback", body=body, headers={"Content-Type": "application/json"})
    answer = connection.getresponse()
    answer.read()
    if answer.status // 100 != (3 if what == "get" else 2):
        sys.exit(f"{what} {kind}: HTTP {answer.status}")
EOF

count() {  # kind allow|get|exchange requests -> instructions while they ran
  local kind=$1 what=$2 requests=$3 port pid log="$work/callgrind.log"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  python3 "$here/mint_tokens.py" "$root/Samples/keys/test-rsa2048.pem" media 1000 "$work/tokens.txt"
  valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$work/callgrind.out" "$work/tokengate" serve \
    --key "$root/Samples/keys/trusted" --requestor TNT --resource-header X-Token-Resource --listen "127.0.0.1:$port" \
    --replay off --cdn-profile "$work/$kind.profile" > "$log" 2>&1 &
  pid=$!
  for _ in $(seq 600); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.2; done
  python3 "$work/client.py" "$port" "$what" "$kind" "$work/tokens.txt" 0 100
  callgrind_control -i on "$pid" >/dev/null 2>&1
  python3 "$work/client.py" "$port" "$what" "$kind" "$work/tokens.txt" 100 "$requests"
  callgrind_control -i off "$pid" >/dev/null 2>&1
  kill "$pid"; wait "$pid" 2>/dev/null || true
  awk '/Collected :/ {print $4}' "$log"
}
per_request() {  # kind allow|get|exchange
  local short long
  short=$(count "$1" "$2" 100); long=$(count "$1" "$2" 600)
  echo $(( (long - short) / 500 ))
}

printf '%-12s %12s %12s %10s %8s %12s\n' kind "allow" "exchange" "more" "ratio" "GET exchange"
for kind in "${kinds[@]}"; do
  allow=$(per_request "$kind" allow)
  exchange=$(per_request "$kind" exchange)
  get=$(per_request "$kind" get)
  printf '%-12s %12d %12d %10d %8s %12d\n' "$kind" "$allow" "$exchange" $((exchange - allow)) \
    "$(python3 -c "print(f'{$exchange / $allow:.3f}')")" "$get"
done
