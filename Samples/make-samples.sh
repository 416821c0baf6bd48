#!/usr/bin/env bash
# Regenerates Samples/tokens/ with `tokeninspect mint` and the TEST-ONLY keys in
# Samples/keys/. Every sample is issued at 2026-01-15T12:00:00Z, so verifying
# with --now 2026-01-15T12:03:00Z (as Samples/README.md does) never expires.
# RSA and Ed25519 signatures are deterministic; ECDSA ones change on each run.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c debug --product tokeninspect >/dev/null
bin=.build/debug/tokeninspect
keys=Samples/keys
out=Samples/tokens
issued=2026-01-15T12:00:00Z
device=samples-device-1
rss='<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>TNT</title><item><title><![CDATA[Dia 2]]></title><guid>2847811</guid><media:rating scheme="urn:mpaa">tv-pg</media:rating></item></channel></rss>'

mint() { "$bin" mint --issue-time "$issued" --requestor TNT --mvpd Comcast_SSO "$@"; }
# Each media sample gets its own session GUID: the same token re-encoded is still
# the same token, and --reject-replays would (rightly) refuse the second copy.
media() { mint --key "$keys/test-rsa2048.pem" --resource TNT "$@"; }
authn() { mint --kind authentication --key "$keys/test-rsa2048.pem" --resource TNT --ttl 24h --device-id "$device" --session-guid 9e1f0b7a "$@"; }
authz() { mint --kind authorization --key "$keys/test-rsa2048.pem" --resource TNT --ttl 1h --device-id "$device" "$@"; }
percent() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.stdin.read().strip(), safe=""))'; }

{
  media --session-guid sample-1                                   # 1  media, raw, legacy signatureInfo (what servers send)
  media --session-guid sample-2 --closed-signature                # 2  media, raw, closed signatureInfo
  media --session-guid sample-3 --root shortAuthorizationToken    # 3  media, the root the vendor's docs show
  media --session-guid sample-4 --resource "$rss"                 # 4  media, Media RSS resourceID in CDATA
  media --session-guid sample-5 --encoding base64                 # 5  media, Base64 (REST serializedToken)
  media --session-guid sample-6 --encoding base64url              # 6  media, Base64url
  media --session-guid sample-7 --encoding base64 | percent       # 7  media, percent-encoded Base64 (a captured query string)
  echo "auth=$(media --session-guid sample-8 | percent)" # 8  media, percent-encoded raw XML as a query parameter
  media --session-guid sample-9 --key "$keys/test-rsa3072.pem"    # 9  media, RSA-3072
  media --session-guid sample-10 --key "$keys/test-p256.pem"       # 10 media, ECDSA P-256
  media --session-guid sample-11 --key "$keys/test-ed25519.pem"    # 11 media, Ed25519
  authn                                   # 12 authentication, raw
  authn --encoding base64                 # 13 authentication, Base64
  authz                                   # 14 authorization, raw
  authz --encoding base64url              # 15 authorization, Base64url
  media --session-guid sample-12 --pretty --closed-signature      # 16 media, pretty-printed raw XML over several lines
  authz --pretty                          # 17 authorization, pretty-printed, legacy form
} > "$out/valid.txt"

serialized=$(media --encoding base64 --session-guid rest-v1)
printf '{"mvpd":"Comcast_SSO","requestor":"TNT","resource":"TNT","expires":"1768478820000","serializedToken":"%s"}\n' "$serialized" > "$out/rest-v1.json"
t1=$(media --encoding base64 --session-guid v2-first)
t2=$(authz --encoding base64)
cat > "$out/rest-v2.json" <<JSON
{
  "resources": ["TNT", "TBS"],
  "decisions": [
    {"resource": "TNT", "serviceProvider": "TNT", "mvpd": "Comcast_SSO", "source": "mvpd", "authorized": true,
     "token": {"notBefore": 1768478400000, "notAfter": 1768478820000, "serializedToken": "$t1"}},
    {"resource": "TNT", "serviceProvider": "TNT", "mvpd": "Comcast_SSO", "source": "mvpd", "authorized": true,
     "token": {"notBefore": 1768478400000, "notAfter": 1768482000000, "serializedToken": "$t2"}}
  ]
}
JSON

replayed=$(media --session-guid once-only)
{
  echo '%%%this is not a token%%%'                                        # 1  INVALID_TOKEN_FORMAT
  media --encoding base64 --session-guid plus-lost | tr '+' ' '           # 2  INVALID_TOKEN_FORMAT ('+' arrived as a space)
  media --key "$keys/test-untrusted-rsa2048.pem"                          # 3  INVALID_SIGNATURE (untrusted key)
  media --key "$keys/test-rsa1024.pem" --allow-insecure-keys              # 4  INVALID_SIGNATURE (an RSA-1024 signature)
  media --issue-time 2026-01-15T11:00:00Z                                 # 5  TOKEN_EXPIRED
  media --issue-time 2026-01-15T12:10:00Z                                 # 6  TOKEN_NOT_YET_VALID
  mint --key "$keys/test-rsa2048.pem" --resource TNT --requestor CNN     # 7  INVALID_REQUESTOR_ID
  media --resource CNN                                                    # 8  INVALID_RESOURCE_ID
  media --mvpd EvilCable                                                  # 9  UNTRUSTED_MVPD
  authz --device-id some-other-device                                     # 10 DEVICE_MISMATCH
  echo "$replayed"                                                        # 11 VALID_TOKEN (first use)
  echo "$replayed"                                                        # 12 TOKEN_REPLAYED
} > "$out/invalid.txt"

# The SDK's other credentials (docs/DESIGN.md#the-sdks-other-credentials): a software statement (RS256, kid sample-1) issued at the
# same instant, valid for a year; its JWKS verifies it as well as the PEM keys do.
mkdir -p Samples/credentials
"$bin" mint software-statement --key "$keys/test-rsa2048.pem" --kid sample-1 --issue-time "$issued" --ttl 365d \
  --software-id 6b1c1c2e-sample-app --software-version 1.0.0 --iss auth.example.test --sub TNT \
  --aud https://api.auth.example.test/o/client/register --jti sample-statement-1 \
  --jwks-out Samples/credentials/sample-1.jwks > Samples/credentials/software-statement.jwt
# A signed requestor ID for requestor TNT (PKCS#1 v1.5 with SHA-256, deterministic),
# and user metadata whose householdID and userID are encrypted to the test key's
# certificate (JWE RSA-OAEP-256 + A256GCM: new ciphertext on every run).
"$bin" mint signed-requestor-id --key "$keys/test-rsa2048.pem" --requestor TNT > Samples/credentials/signed-requestor-id.txt
"$bin" mint metadata --encrypt-to "$keys/test-rsa2048-cert.pem" --updated 1768478400 \
  --data 'zip=["10001","10002"]' --data householdID=household-3456 \
  --data 'maxRating={"MPAA":"PG-13","VCHIP":"TV-14"}' --data userID=user-42 \
  --data 'channelID=["TNT","CNN"]' --encrypt householdID --encrypt userID > Samples/credentials/user-metadata.json
echo "wrote $(ls $out) and $(ls Samples/credentials)"
# The pasted CDN tokens (docs/DESIGN.md#reading-cdn-tokens-back) have their own script.
bash Samples/make-cdn-samples.sh
