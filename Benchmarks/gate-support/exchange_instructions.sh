#!/usr/bin/env bash
# The gate's instructions per request, counted by callgrind: auth-request
# allows and each HMAC kind's exchanges, with the token in a JSON body (POST
# /v1/playback) and in the query (GET /v1/playback?token=…, a player's
# redirect), on the release binary scripts/release packs, one keep-alive
# connection, 1,000 distinct media tokens a run with `--replay off`, so every
# request verifies in full. The kind `origin` counts what Benchmarks/cdn's last
# figure compares: a segment request at the origin carrying a playback session
# cookie, and the same request carrying a CAT (HMAC) cookie, on a gate with
# `--session-secret` and `--cat-key`.
# On this machine a rate moves by a tenth between minutes; an instruction count
# moves by less than 0.1 %, so an A/B of a few thousand instructions (a
# microsecond or two) shows here when Benchmarks/cdn cannot (docs/PERFORMANCE.md,
# "An exchange in instructions").
#
#   Benchmarks/gate-support/exchange_instructions.sh [TOKENGATE] [KIND...]
#     TOKENGATE  default: the release build (scripts/release --binaries)
#     KIND       akamai, cat-mac0, secure-link, origin (default: all four)
#
# With PROFILES=DIR, each run's callgrind output is kept as
# DIR/KIND-WHAT-REQUESTS.out, for callgrind_annotate (--inclusive=yes) to
# compare two routes symbol by symbol.
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
inspect="$(dirname "$binary")/tokeninspect"
kinds=("$@")
[ ${#kinds[@]} -gt 0 ] || kinds=(akamai cat-mac0 secure-link origin)

rm -rf "$work" && mkdir -p "$work"
# Valgrind 3.19 (Debian 12) cannot read the DWARF 5 the Swift toolchain writes;
# the symbol table it needs for names stays.
strip --strip-debug -o "$work/tokengate" "$binary"
openssl rand -hex 32 > "$work/hmac.key"
openssl rand -hex 32 > "$work/session.key"
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
for index in range(first, first + count):
    token = tokens[index % len(tokens)]
    if what in ("session", "cat"):
        # One cookie, presented again on every segment, as a player does.
        connection.request("GET", "/v1/auth-request", headers={"Cookie": token, "X-Original-URI": "/hls/tnt/seg.ts", "X-Token-Resource": "TNT"})
    elif what == "allow":
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

count() {  # kind allow|get|exchange|session|cat requests -> instructions while they ran
  local kind=$1 what=$2 requests=$3 port pid log="$work/callgrind.log" gate_options
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  python3 "$here/mint_tokens.py" "$root/Samples/keys/test-rsa2048.pem" media 1000 "$work/tokens.txt"
  if [ "$kind" = origin ]; then
    gate_options=(--session-secret "$work/session.key" --cat-key "$work/hmac.key bench-mac")
  else
    gate_options=(--cdn-profile "$work/$kind.profile")
  fi
  valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$work/callgrind.out" "$work/tokengate" serve \
    --key "$root/Samples/keys/trusted" --requestor TNT --resource-header X-Token-Resource --listen "127.0.0.1:$port" \
    --replay off "${gate_options[@]}" > "$log" 2>&1 &
  pid=$!
  for _ in $(seq 600); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.2; done
  case "$what" in
    session)  # the session the gate mints on a media token's allow
      curl -s -D - -o /dev/null -H "X-Original-URI: /hls/tnt/a.ts?token=$(head -n1 "$work/tokens.txt")" -H "X-Token-Resource: TNT" \
        "http://127.0.0.1:$port/v1/auth-request" | awk -F': ' 'tolower($1)=="x-token-session" {print "tokengate_session=" $2}' | tr -d '\r' > "$work/cookies.txt" ;;
    cat)  # a CAT as the cat-mac0 exchange issues it, minted by tokeninspect with the same key
      "$inspect" mint cdn --profile "$work/cat-mac0.profile" --resource TNT --requestor TNT | sed -n 's/^Set-Cookie: \(cat=[^;]*\);.*/\1/p' > "$work/cookies.txt" ;;
  esac
  local requests_file="$work/tokens.txt"
  if [ "$what" = session ] || [ "$what" = cat ]; then
    [ -s "$work/cookies.txt" ] || { echo "exchange_instructions: no $what cookie to present" >&2; cat "$log" >&2; exit 1; }
    requests_file="$work/cookies.txt"
  fi
  python3 "$work/client.py" "$port" "$what" "$kind" "$requests_file" 0 100
  callgrind_control -i on "$pid" >/dev/null 2>&1
  python3 "$work/client.py" "$port" "$what" "$kind" "$requests_file" 100 "$requests"
  callgrind_control -i off "$pid" >/dev/null 2>&1
  kill "$pid"; wait "$pid" 2>/dev/null || true
  if [ -n "${PROFILES:-}" ]; then mkdir -p "$PROFILES" && cp "$work/callgrind.out" "$PROFILES/$kind-$what-$requests.out"; fi
  awk '/Collected :/ {print $4}' "$log"
}
per_request() {  # kind allow|get|exchange
  local short long
  short=$(count "$1" "$2" 100); long=$(count "$1" "$2" 600)
  echo $(( (long - short) / 500 ))
}

printf '%-12s %12s %12s %10s %8s %12s\n' kind "allow" "exchange" "more" "ratio" "GET exchange"
for kind in "${kinds[@]}"; do
  if [ "$kind" = origin ]; then
    session=$(per_request origin session)
    cat=$(per_request origin cat)
    printf '%-12s %12s %12s %10s %8s\n' "origin" "session" "CAT" "more" "ratio"
    printf '%-12s %12d %12d %10d %8s\n' "" "$session" "$cat" $((cat - session)) "$(python3 -c "print(f'{$cat / $session:.3f}')")"
    continue
  fi
  allow=$(per_request "$kind" allow)
  exchange=$(per_request "$kind" exchange)
  get=$(per_request "$kind" get)
  printf '%-12s %12d %12d %10d %8s %12d\n' "$kind" "$allow" "$exchange" $((exchange - allow)) \
    "$(python3 -c "print(f'{$exchange / $allow:.3f}')")" "$get"
done
