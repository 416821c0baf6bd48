# TEST-ONLY: the secret below is published in this repository. Never use it for a real edge.
name = samples-manifest
kind = nginx-secure-link
key = Samples/cdn/test-only-secure-link.secret
resource = TNT https://edge.example.test/live/tnt/master.m3u8
scope = folder
carrier = manifest
manifest-origin = http://origin.example.test
secure-link-md5 = $secure_link_expires$folder $secret
lifetime = 300
