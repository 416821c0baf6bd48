# A CDN profile for the nginx edge of deploy/nginx/tokengate-edge.conf:
# streams (HLS, DASH), the token in two cookies that cover a channel's
# folder (docs/DESIGN.md#cdn-profiles). Install it as
# /etc/tokengate/cdn/nginx-edge.profile and name it in tokengate.conf:
#   cdn-profile = /etc/tokengate/cdn/nginx-edge.profile
# The player opens GET https://gate.media.example.com/v1/playback?token=…&resource=TNT
# and is sent on to the resource's URL with the cookies.
name = nginx-edge
kind = nginx-secure-link
# The secret the edge's secure_link_md5 holds too (hex, at least 32 bytes:
# `openssl rand -hex 32`). A relative path is read under $CREDENTIALS_DIRECTORY:
# the unit's LoadCredential=nginx-edge.secret:/etc/tokengate/nginx-edge.secret
# puts it there. A second key line verifies only (rotation).
key = nginx-edge.secret
# One line a channel: the playlist's URL. Its folder (/hls/tnt/) is what the
# token covers, and what the edge's location captures as $folder.
resource = TNT https://edge.media.example.com/hls/tnt/master.m3u8
resource = CNN https://edge.media.example.com/hls/cnn/master.m3u8
scope = folder
carrier = cookie
# The gate (gate.media.example.com) sets the cookies on its redirect, for the
# edge (edge.media.example.com): a browser keeps a cookie only for a domain
# that matches the host that set it, so both live under this one.
cookie-domain = media.example.com
# Seconds. Past it the edge answers 410 and the player needs a new media
# token; make it as long as a viewing (renewal is not there yet).
lifetime = 14400
# The edge's expression with `$secret` for the secret: the same text as the
# stream location's secure_link_md5 there. $folder, not $uri: the token
# covers every file of the folder.
secure-link-md5 = $secure_link_expires$folder $secret
