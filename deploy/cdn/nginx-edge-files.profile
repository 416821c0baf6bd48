# A CDN profile for single files on the nginx edge of
# deploy/nginx/tokengate-edge.conf (its /downloads/ location): the link
# carries ?md5=…&expires=… and covers that one URL (docs/DESIGN.md#cdn-profiles).
# Not for streams: a player appends no query to the URLs a playlist names.
# With both profiles configured, a request names one: profile=nginx-edge-files.
name = nginx-edge-files
kind = nginx-secure-link
# The same secret as nginx-edge.profile (the edge holds one).
key = nginx-edge.secret
resource = TNT-TRAILER https://edge.media.example.com/downloads/tnt/trailer.mp4
scope = url
carrier = query
# A link is for starting a download now, not for sharing: ten minutes.
lifetime = 600
# The /downloads/ location's secure_link_md5 with `$secret` for the secret.
secure-link-md5 = $secure_link_expires$uri $secret
