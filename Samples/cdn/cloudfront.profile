# TEST-ONLY: the key below is published in this repository. Never use it for a real edge.
name = samples-cloudfront
kind = cloudfront
key = Samples/cdn/test-only-cloudfront-rsa2048.pem K2JCJMDEHXQW5F
resource = TNT https://d111111abcdef8.cloudfront.net/hls/tnt/master.m3u8
lifetime = 14400
