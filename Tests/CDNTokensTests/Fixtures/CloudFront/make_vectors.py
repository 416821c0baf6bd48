#!/usr/bin/env python3
# Known-answer vectors for CloudFront signed URLs and cookies, made by botocore's
# own CloudFrontSigner (botocore 1.44.8, cryptography 50.0.2 for the RSA callback).
#
# Re-run from the repository's root:
#   ~/.cache/tokeninspect-venv/bin/python3 Tests/CDNTokensTests/Fixtures/CloudFront/make_vectors.py \
#       > Tests/CDNTokensTests/Fixtures/CloudFront/vectors.json
#
# The keys beside this script (test-only-cloudfront-*.pem) are TEST-ONLY keys made with
#   openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048   (twice: the second key verifies nothing)
#   openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256
# and protect nothing.
#
# Each vector: the URL botocore signs, the resource and conditions it was given, the
# policy it signed (exactly; for a canned policy, the one botocore builds and signs), its
# signed URL, and the cookie pairs carrying the same values. "issue" holds the gate's
# issue parameters when our issuer must make this URL byte for byte (null: read only).
# Vectors with "hashAlgorithm" sign with SHA-256 (RSA) or ECDSA P-256 through the same
# CloudFrontSigner callback and append "&Hash-Algorithm=SHA256", as CloudFront documents:
# botocore itself writes no Hash-Algorithm.
import json
import os
import sys
from datetime import datetime, timezone

from botocore.signers import CloudFrontSigner
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding

HERE = os.path.dirname(os.path.abspath(__file__))
KEY_PAIR_ID = "K2JCJMDEHXQW5F"


def load(name):
    with open(os.path.join(HERE, name), "rb") as handle:
        return serialization.load_pem_private_key(handle.read(), password=None)


RSA = load("test-only-cloudfront-rsa2048.pem")
P256 = load("test-only-cloudfront-p256.pem")


def rsa_sha1(message):
    return RSA.sign(message, padding.PKCS1v15(), hashes.SHA1())


def rsa_sha256(message):
    return RSA.sign(message, padding.PKCS1v15(), hashes.SHA256())


def ecdsa_sha256(message):
    return P256.sign(message, ec.ECDSA(hashes.SHA256()))


def when(seconds):
    return datetime.fromtimestamp(seconds, tz=timezone.utc)


def vector(name, url, expires, resource=None, ip=None, starts=None, issue=None, signer=rsa_sha1, hash_algorithm=None):
    cf = CloudFrontSigner(KEY_PAIR_ID, signer)
    canned = resource is None and ip is None and starts is None
    if canned:
        policy = cf.build_policy(url, when(expires))
        signed = cf.generate_presigned_url(url, date_less_than=when(expires))
    else:
        policy = cf.build_policy(resource, when(expires), date_greater_than=when(starts) if starts else None, ip_address=ip)
        signed = cf.generate_presigned_url(url, policy=policy)
    if hash_algorithm:
        signed += "&Hash-Algorithm=" + hash_algorithm
    query = signed[len(url) + 1:]
    pairs = [pair.split("=", 1) for pair in query.split("&")]
    cookies = [["CloudFront-" + key, value] for key, value in pairs]
    return {
        "name": name,
        "url": url,
        "resource": resource,
        "expires": expires,
        "starts": starts,
        "ip": ip,
        "policy": policy,
        "canned": canned,
        "signedURL": signed,
        "cookies": cookies,
        "issue": issue,
        "key": "p256" if signer is ecdsa_sha256 else "rsa",
    }


HOST = "https://d111111abcdef8.cloudfront.net"
NOW = 1767222000
LIFETIME = 3600
EXPIRES = NOW + LIFETIME

vectors = [
    vector("canned", HOST + "/hls/tnt/master.m3u8", EXPIRES,
           issue={"scope": "url", "now": NOW, "lifetime": LIFETIME, "clientIP": None}),
    vector("canned with an existing query", HOST + "/vod/movie.mp4?quality=hd&lang=en", EXPIRES,
           issue={"scope": "url", "now": NOW, "lifetime": LIFETIME, "clientIP": None}),
    vector("custom, folder wildcard", HOST + "/hls/tnt/master.m3u8", EXPIRES, resource=HOST + "/hls/tnt/*",
           issue={"scope": "folder", "now": NOW, "lifetime": LIFETIME, "clientIP": None}),
    vector("custom, folder wildcard with a port", "https://media.example.com:8443/live/ch1/index.m3u8", EXPIRES,
           resource="https://media.example.com:8443/live/ch1/*",
           issue={"scope": "folder", "now": NOW, "lifetime": LIFETIME, "clientIP": None}),
    vector("custom, folder wildcard with IP", HOST + "/hls/tnt/master.m3u8", EXPIRES, resource=HOST + "/hls/tnt/*",
           ip="203.0.113.7",
           issue={"scope": "folder", "now": NOW, "lifetime": LIFETIME, "clientIP": "203.0.113.7"}),
    vector("custom, URL with IP and an existing query", HOST + "/vod/movie.mp4?quality=hd", EXPIRES,
           resource=HOST + "/vod/movie.mp4?quality=hd", ip="198.51.100.23",
           issue={"scope": "url", "now": NOW, "lifetime": LIFETIME, "clientIP": "198.51.100.23"}),
    # botocore appends /32 to any address without '/', an IPv6 one too (a /32 IPv6
    # prefix is a whole provider); the issuer writes /128, so it is given here.
    vector("custom, folder wildcard with IPv6 /128", HOST + "/hls/tnt/master.m3u8", EXPIRES, resource=HOST + "/hls/tnt/*",
           ip="2001:db8::7/128",
           issue={"scope": "folder", "now": NOW, "lifetime": LIFETIME, "clientIP": "2001:db8::7"}),
    vector("custom with DateGreaterThan and a subnet", HOST + "/hls/tnt/seg-001.ts", EXPIRES, resource=HOST + "/hls/*",
           ip="192.0.2.0/24", starts=NOW - 60),
    vector("custom with '?' wildcards", HOST + "/hls/tnt/seg-001.ts", EXPIRES, resource=HOST + "/hls/tnt/seg-00?.ts"),
    vector("canned, SHA-256", HOST + "/hls/tnt/master.m3u8", EXPIRES, signer=rsa_sha256, hash_algorithm="SHA256"),
    vector("custom, ECDSA P-256", HOST + "/hls/tnt/master.m3u8", EXPIRES, resource=HOST + "/hls/tnt/*",
           signer=ecdsa_sha256, hash_algorithm="SHA256"),
]

json.dump({"keyPairId": KEY_PAIR_ID, "generator": "botocore " + __import__("botocore").__version__,
           "vectors": vectors}, sys.stdout, indent=2)
sys.stdout.write("\n")
