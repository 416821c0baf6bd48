#!/usr/bin/env python3
"""Known-answer Common Access Tokens made by python-cwt 3.3 and pycose 1.1.

Re-run from the repository root (writes cat_vectors.json beside this script):

    ~/.cache/tokeninspect-venv/bin/python3 Tests/CDNTokensTests/Fixtures/CAT/make_cat_vectors.py

Keys: hmac.hex (HMAC 256/256, kid "edge-1") and es256-private.pem (ES256, kid
"edge-es"), both beside this script (made with `openssl rand -hex 32` and
`openssl ecparam -name prime256v1 -genkey | openssl pkcs8 -topk8 -nocrypt`).

- "issued": the tokens the gate issues, built with pycose from the layout the
  gate writes (COSE_Mac0 tag 17 / COSE_Sign1 tag 18, alg protected, kid
  unprotected, claims iss, iat, nbf, exp, cti, catv, catu, [catnip]). A Mac0
  is deterministic, so our issuer must give the same text byte for byte; a
  Sign1's signature is random, so its to-be-signed bytes must be the same.
- "peer": tokens made by python-cwt (`encode_and_mac` / `encode_and_sign`,
  with and without the CWT tag 61; cwt adds its own `iat` and `nbf`) and by
  pycose without the COSE tag, with CAT claims (catu, catnip, catm,
  catreplay); each lists request facts and the status a reader must give.
"""
import base64, json, os, time
import cbor2, cwt
from cwt import COSEKey
from pycose.messages import Mac0Message, Sign1Message
from pycose.headers import Algorithm, KID
from pycose.algorithms import HMAC256, Es256
from pycose.keys import SymmetricKey, EC2Key
from cryptography.hazmat.primitives import serialization

HERE = os.path.dirname(os.path.abspath(__file__))
HMAC_KEY = bytes.fromhex(open(os.path.join(HERE, "hmac.hex")).read().strip())
PEM = open(os.path.join(HERE, "es256-private.pem"), "rb").read()
EC_PRIVATE = serialization.load_pem_private_key(PEM, password=None)
NUMBERS = EC_PRIVATE.private_numbers()


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def pycose_hmac_key():
    return SymmetricKey(k=HMAC_KEY)


def pycose_ec_key():
    pub = NUMBERS.public_numbers
    return EC2Key(crv="P_256", d=NUMBERS.private_value.to_bytes(32, "big"),
                  x=pub.x.to_bytes(32, "big"), y=pub.y.to_bytes(32, "big"))


def ip_bytes(text):
    import ipaddress
    return ipaddress.ip_address(text).packed


def issued_claims(issuer, url_path, folder, now, lifetime, leeway, cti, client_ip):
    covered = url_path[: url_path.rfind("/") + 1] if folder else url_path
    claims = {1: issuer, 6: now, 5: now - leeway, 4: now + lifetime, 7: cti, 310: 1,
              312: {3: {1 if folder else 0: covered}}}
    if client_ip:
        address = ip_bytes(client_ip)
        claims[311] = [cbor2.CBORTag(52 if len(address) == 4 else 54, address)]
    return claims


def to_be_signed(protected, payload):
    return cbor2.dumps(["Signature1", protected, b"", payload])


issued = []
ISSUED_CASES = [
    dict(name="folder scope", url="https://cdn.example.com/hls/tnt/master.m3u8", scope="folder", now=1768478400,
         lifetime=3600, leeway=30, clientIP=None, issuer="tokengate", cti="00112233445566778899aabbccddeeff"),
    dict(name="url scope, IPv4 bound", url="https://cdn.example.com/vod/movie.mp4?x=1", scope="url", now=1768478400,
         lifetime=600, leeway=30, clientIP="192.0.2.33", issuer="requestor-1", cti="0f0e0d0c0b0a09080706050403020100"),
    dict(name="folder scope, IPv6 bound", url="https://cdn.example.com:8443/live/ch1/index.m3u8", scope="folder",
         now=1768480000, lifetime=86400, leeway=0, clientIP="2001:db8::7", issuer="tnt",
         cti="ffffffffffffffffffffffffffffffff"),
]
for case in ISSUED_CASES:
    path = "/" + case["url"].split("://", 1)[1].split("/", 1)[1].split("?", 1)[0]
    claims = issued_claims(case["issuer"], path, case["scope"] == "folder", case["now"], case["lifetime"],
                           case["leeway"], bytes.fromhex(case["cti"]), case["clientIP"])
    payload = cbor2.dumps(claims)
    mac = Mac0Message(phdr={Algorithm: HMAC256}, uhdr={KID: b"edge-1"}, payload=payload)
    mac.key = pycose_hmac_key()
    sign = Sign1Message(phdr={Algorithm: Es256}, uhdr={KID: b"edge-es"}, payload=payload)
    sign.key = pycose_ec_key()
    sign_bytes = sign.encode(tag=True)
    decoded = cbor2.loads(sign_bytes).value
    issued.append(dict(case, mac0=b64url(mac.encode(tag=True)), sign1=b64url(sign_bytes),
                       sign1ToBeSigned=to_be_signed(decoded[0], decoded[2]).hex()))

now = int(time.time())
hmac_cose = COSEKey.from_symmetric_key(HMAC_KEY, alg="HS256", kid="edge-1")
ec_cose = COSEKey.from_pem(PEM, alg="ES256", kid="edge-es")
cat_claims = {1: "cdn-issuer", 4: now + 3600, 7: bytes.fromhex("a1b2c3d4"), 308: 1,
              312: {0: {0: "https"}, 3: {1: "/hls/tnt/"}, 8: {0: ".ts"}}, 313: ["GET", "HEAD"],
              311: [cbor2.CBORTag(52, [24, bytes([198, 51, 100])]), cbor2.CBORTag(54, bytes.fromhex("20010db8000000000000000000000007"))]}
good = dict(url="https://cdn.example.com/hls/tnt/seg-1.ts", now=now, clientIP="198.51.100.9", method="GET", status="VALID_TOKEN")
checks = [
    good,
    dict(good, url="https://cdn.example.com/hls/tnt2/seg-1.ts", status="URL_NOT_COVERED"),
    dict(good, url="https://cdn.example.com/hls/tnt/index.m3u8", status="URL_NOT_COVERED"),
    dict(good, url="http://cdn.example.com/hls/tnt/seg-1.ts", status="URL_NOT_COVERED"),
    dict(good, method="POST", status="URL_NOT_COVERED"),
    dict(good, clientIP="198.51.101.9", status="IP_MISMATCH"),
    dict(good, clientIP="2001:db8::7", status="VALID_TOKEN"),
    dict(good, clientIP=None, status="IP_MISMATCH"),
    dict(good, now=now + 3600 + 31, status="TOKEN_EXPIRED"),
    dict(good, now=now - 31, status="TOKEN_NOT_YET_VALID"),
]
peer = []
for name, token, key in [
    ("cwt Mac0, COSE tag", cwt.encode_and_mac(cat_claims, hmac_cose, tagged=False), "hmac"),
    ("cwt Mac0, CWT tag 61", cwt.encode_and_mac(cat_claims, hmac_cose, tagged=True), "hmac"),
    ("cwt Sign1, COSE tag", cwt.encode_and_sign(cat_claims, ec_cose, tagged=False), "es256"),
    ("cwt Sign1, CWT tag 61", cwt.encode_and_sign(cat_claims, ec_cose, tagged=True), "es256"),
]:
    peer.append(dict(name=name, key=key, kid="edge-1" if key == "hmac" else "edge-es", token=b64url(token),
                     cwtTag=token[:2] == b"\xd8\x3d", coseTag=True, iss="cdn-issuer", cti="a1b2c3d4", catreplay=1, checks=checks))

untagged_claims = {1: "cdn-issuer", 5: now - 10, 6: now - 10, 4: now + 3600, 7: bytes.fromhex("0b71"), 308: 2,
                   312: {3: {0: "/hls/tnt/seg-1.ts"}}, 313: "GET"}
for name, message, key in [
    ("pycose Mac0, untagged", Mac0Message(phdr={Algorithm: HMAC256}, uhdr={KID: b"edge-1"}, payload=cbor2.dumps(untagged_claims)), "hmac"),
    ("pycose Sign1, untagged", Sign1Message(phdr={Algorithm: Es256}, uhdr={KID: b"edge-es"}, payload=cbor2.dumps(untagged_claims)), "es256"),
]:
    message.key = pycose_hmac_key() if key == "hmac" else pycose_ec_key()
    token = message.encode(tag=False)
    peer.append(dict(name=name, key=key, kid="edge-1" if key == "hmac" else "edge-es", token=b64url(token),
                     cwtTag=False, coseTag=False, iss="cdn-issuer", cti="0b71", catreplay=2, checks=[
                         dict(url="https://cdn.example.com/hls/tnt/seg-1.ts", now=now, clientIP=None, method="GET", status="VALID_TOKEN"),
                         dict(url="https://cdn.example.com/hls/tnt/seg-2.ts", now=now, clientIP=None, method="GET", status="URL_NOT_COVERED"),
                         dict(url="https://cdn.example.com/hls/tnt/seg-1.ts", now=now, clientIP=None, method="HEAD", status="URL_NOT_COVERED"),
                     ]))

with open(os.path.join(HERE, "cat_vectors.json"), "w") as out:
    json.dump(dict(generator="make_cat_vectors.py (python-cwt %s, pycose, cbor2)" % cwt.__version__,
                   hmacKid="edge-1", es256Kid="edge-es", issued=issued, peer=peer), out, indent=2)
    out.write("\n")
