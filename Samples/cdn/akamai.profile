# TEST-ONLY: the key below is published in this repository. Never use it for a real edge.
name = samples-akamai
kind = akamai
key = Samples/cdn/test-only-akamai.hex
resource = TNT https://akamai.example.test/hls/tnt/master.m3u8
carrier = query
lifetime = 14400
