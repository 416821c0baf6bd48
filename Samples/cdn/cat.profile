# TEST-ONLY: the key below is published in this repository. Never use it for a real edge.
name = samples-cat
kind = cat
key = Samples/cdn/test-only-cat-hmac.hex samples-edge-1
resource = TNT https://cat.example.test/hls/tnt/master.m3u8
carrier = header
issuer = TNT
lifetime = 14400
