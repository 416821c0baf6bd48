#!/usr/bin/env python3
"""Mints distinct signed tokens for Benchmarks/gate, fast: the element is the
one `tokeninspect mint` writes (the project's own rule: the signature covers
the token element's exact bytes), signed with the test-only RSA-2048 key,
legacy signatureInfo form, Base64url. Issue time is now, so the gate (with
its real clock) accepts them for 7 minutes (media) or an hour (authZ).

usage: mint_tokens.py KEY KIND COUNT OUT [REPEAT] [RESOURCES] [TTL]
  KIND      media | authorization
  REPEAT    each distinct token written REPEAT times in a row (authZ cache runs)
  RESOURCES token i is for resource R<i mod RESOURCES> instead of TNT (the
            round-robin figure; tokens.lua sends the matching resource)
  TTL       a media token's lifetime in seconds (default 420): a run that
            cycles the same tokens for longer needs them to outlive it
"""
import base64, datetime, hashlib, sys, uuid
from multiprocessing import Pool
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding

key_path, kind, count, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
repeat = int(sys.argv[5]) if len(sys.argv) > 5 else 1
resources = int(sys.argv[6]) if len(sys.argv) > 6 else 0
ttl_milliseconds = (int(sys.argv[7]) if len(sys.argv) > 7 else 420) * 1000
now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
_key = None
DEVICE_FINGERPRINT = hashlib.sha256(b"bench-device").hexdigest()

def element(index):
    guid = uuid.uuid4().hex
    resource = f"R{index % resources}" if resources else "TNT"
    if kind == "media":
        issue = now.strftime("%Y-%m-%d %H:%M:%S +0000")
        return (f"<authToken><sessionGUID>{guid}</sessionGUID><requestorID>TNT</requestorID>"
                f"<resourceID>{resource}</resourceID><ttl>{ttl_milliseconds}</ttl><issueTime>{issue}</issueTime>"
                f"<mvpdId>Comcast_SSO</mvpdId></authToken>")
    # Bound to the device "bench-device" (tokens.lua sends it with $DEVICE: the
    # gate refuses a device-bound token whose request names no device); each
    # token distinct by its expiry, a second apart.
    expires = (now + datetime.timedelta(hours=1, seconds=index)).strftime("%Y/%m/%d %H:%M:%S GMT +0000")
    return (f"<simpleAuthorizationToken><simpleTokenRequestorID>TNT</simpleTokenRequestorID>"
            f"<simpleTokenResourceID>TNT</simpleTokenResourceID><simpleTokenTTL>{expires}</simpleTokenTTL>"
            f"<simpleTokenMsoID>Comcast_SSO</simpleTokenMsoID><simpleTokenDeviceID><simpleTokenFingerprint>"
            f"{DEVICE_FINGERPRINT}</simpleTokenFingerprint></simpleTokenDeviceID></simpleAuthorizationToken>")

def mint(index):
    global _key
    if _key is None:
        _key = serialization.load_pem_private_key(open(key_path, "rb").read(), None)
    body = element(index).encode()
    signature = base64.b64encode(_key.sign(body, padding.PKCS1v15(), hashes.SHA256()))
    xml = b"<signatureInfo>" + signature + b"<signatureInfo>" + body
    return base64.urlsafe_b64encode(xml).rstrip(b"=").decode()

if __name__ == "__main__":
    with Pool(2) as pool:
        tokens = pool.map(mint, range(count), chunksize=256)
    with open(out, "w") as f:
        for token in tokens:
            for _ in range(repeat):
                f.write(token + "\n")
