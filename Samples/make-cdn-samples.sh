#!/usr/bin/env bash
# Regenerates the pasted CDN tokens in Samples/cdn/ with `tokeninspect mint cdn`
# and the TEST-ONLY profiles and keys beside them, issued at 2026-01-15T12:00:00Z
# (4 hours' lifetime), so `verify --now 2026-01-15T12:03:00Z` (as
# Samples/README.md does) never expires. CAT `cti`s are random, so the CAT's
# bytes change on each run; the others are identical.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c debug --product tokeninspect >/dev/null
bin=.build/debug/tokeninspect
out=Samples/cdn
mint() { "$bin" mint cdn --now 2026-01-15T12:00:00Z --resource TNT --profile "$out/$1.profile"; }

# The URL the player opens, with the EdgeAuth token in its query (carrier = query).
mint akamai > "$out/akamai-url.txt"
# CloudFront's three cookies as a browser sends them on a segment request: one Cookie line.
printf 'Cookie: %s\n' "$(mint cloudfront | sed -n 's/^Set-Cookie: \([^;]*\);.*/\1/p' | paste -sd ';' | sed 's/;/; /g')" > "$out/cloudfront-cookie.txt"
# The CAT as a header line (carrier = header), without the URL line.
mint cat | grep '^CTA-Common-Access-Token: ' > "$out/cat-header.txt"
# What the exchange hands out for nginx: the URL, then its two Set-Cookie lines (one paste).
mint nginx-secure-link > "$out/nginx-secure-link-set-cookie.txt"
echo "wrote $(cd "$out" && ls ./*.txt)"
