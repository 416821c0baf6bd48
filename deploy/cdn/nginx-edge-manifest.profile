# A CDN profile for players that keep no cookies (TV apps, casting
# receivers, ffmpeg-based players), with the nginx edge of
# deploy/nginx/tokengate-edge-query.conf: the gate fetches each playlist
# or MPD from the origin and writes the token into every URI of it, for
# this viewer (docs/CDN.md, "Players that keep no cookies"). Install it as
# /etc/tokengate/cdn/nginx-edge-manifest.profile and name it in tokengate.conf:
#   cdn-profile = /etc/tokengate/cdn/nginx-edge-manifest.profile
#   public-url = https://gate.media.example.com
# The player opens GET https://gate.media.example.com/v1/playback?token=…&resource=TNT-LIVE
# and is sent to https://gate.media.example.com/v1/manifest/live/tnt/master.m3u8?tgs=…,
# whose segments point at the edge with ?md5=…&expires=….
name = nginx-edge-manifest
kind = nginx-secure-link
# The secret the edge's secure_link_md5 holds too (hex, at least 32 bytes).
key = nginx-edge.secret
# One line a channel: the playlist's URL on the edge. Its folder
# (/live/tnt/) is what each token covers, and what the edge captures as $folder.
resource = TNT-LIVE https://edge.media.example.com/live/tnt/master.m3u8
resource = TNT-DASH https://edge.media.example.com/live/tnt-dash/manifest.mpd
scope = folder
carrier = manifest
# Where the gate fetches the playlists and MPDs (the edge serves segments only).
manifest-origin = http://127.0.0.1:8080
# Seconds. A live playlist is reloaded every few seconds, and every reload
# carries a new token: a few minutes is enough, the session renews them.
lifetime = 300
# The query edge's expression: $folder, not $uri, so one token per answer
# covers every segment the manifest names.
secure-link-md5 = $secure_link_expires$folder $secret
