#!/usr/bin/env python3
"""Writes the degenerate TEST-ONLY public keys (and the tokens they would
forge) that docs/DESIGN.md#degenerate-keys says must be refused at load.

OpenSSL will not generate such keys, so their DER SubjectPublicKeyInfo is
written by hand here. Run from this directory:  python3 make-degenerate-keys.py
Needs only the Python standard library and the `openssl` command line (to read
the moduli of test-rsa2048.pub.pem and test-rsa3072.pub.pem). The output is
deterministic, so re-running it changes nothing.

Every file written is for tests only: a trusted key directory must never hold one.
"""
import base64
import hashlib
import subprocess

def der_length(n):
    if n < 0x80:
        return bytes([n])
    body = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(body)]) + body

def tlv(tag, body):
    return bytes([tag]) + der_length(len(body)) + body

def sequence(*parts):
    return tlv(0x30, b"".join(parts))

def integer(value):
    body = value.to_bytes(max(1, (value.bit_length() + 8) // 8), "big")  # room for a 0 sign byte
    return tlv(0x02, body)

def bit_string(body):
    return tlv(0x03, b"\x00" + body)

NULL = b"\x05\x00"
RSA_ENCRYPTION = bytes.fromhex("06092a864886f70d010101")
EC_PUBLIC_KEY = bytes.fromhex("06072a8648ce3d0201")
PRIME256V1 = bytes.fromhex("06082a8648ce3d030107")
ED25519 = bytes.fromhex("06032b6570")

def rsa_public_key(n, e):
    return sequence(integer(n), integer(e))

def rsa_spki(n, e):
    return sequence(sequence(RSA_ENCRYPTION, NULL), bit_string(rsa_public_key(n, e)))

def ec_spki(point):
    return sequence(sequence(EC_PUBLIC_KEY, PRIME256V1), bit_string(point))

def ed25519_spki(raw):
    return sequence(sequence(ED25519), bit_string(raw))

def pem(label, der):
    text = base64.encodebytes(der).decode().replace("\n", "")
    lines = [text[i:i + 64] for i in range(0, len(text), 64)]
    return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----\n"

def write(name, text):
    with open(name, "w") as f:
        f.write(text)

def modulus(name):
    out = subprocess.run(["openssl", "rsa", "-pubin", "-in", name, "-noout", "-modulus"],
                         check=True, capture_output=True, text=True).stdout
    return int(out.strip().split("=", 1)[1], 16)

n2048 = modulus("test-rsa2048.pub.pem")
n3072 = modulus("test-rsa3072.pub.pem")

# RSA: refused.
write("test-degenerate-rsa2048-e1.pub.pem", pem("PUBLIC KEY", rsa_spki(n2048, 1)))
write("test-degenerate-rsa2048-e1-pkcs1.pub.pem", pem("RSA PUBLIC KEY", rsa_public_key(n2048, 1)))
write("test-degenerate-rsa2048-e2.pub.pem", pem("PUBLIC KEY", rsa_spki(n2048, 2)))
write("test-degenerate-rsa2048-e65538.pub.pem", pem("PUBLIC KEY", rsa_spki(n2048, 65538)))
write("test-degenerate-rsa2048-e33bits.pub.pem", pem("PUBLIC KEY", rsa_spki(n2048, 2**32 + 1)))
write("test-degenerate-rsa3072-e3070bits.pub.pem", pem("PUBLIC KEY", rsa_spki(n3072, 2**3069 + 2**1000 + 1)))
write("test-degenerate-rsa2048-even-modulus.pub.pem", pem("PUBLIC KEY", rsa_spki(n2048 + 1, 65537)))
write("test-degenerate-rsa16392.pub.pem", pem("PUBLIC KEY", rsa_spki(2**16391 + n2048, 65537)))
# RSA: the boundaries, accepted (not real key pairs: nothing verifies with them).
write("test-rsa2048-e3.pub.pem", pem("PUBLIC KEY", rsa_spki(n2048, 3)))
write("test-rsa2048-e32bits.pub.pem", pem("PUBLIC KEY", rsa_spki(n2048, 2**32 - 1)))
write("test-rsa16384-modulus.pub.pem", pem("PUBLIC KEY", rsa_spki(2**16383 + n2048, 65537)))

# EC P-256: refused.
write("test-degenerate-p256-off-curve.pub.pem", pem("PUBLIC KEY", ec_spki(b"\x04" + (1).to_bytes(32, "big") * 2)))
write("test-degenerate-p256-infinity.pub.pem", pem("PUBLIC KEY", ec_spki(b"\x00")))

# Ed25519: refused.
P = 2**255 - 19
write("test-degenerate-ed25519-identity.pub.pem", pem("PUBLIC KEY", ed25519_spki((1).to_bytes(32, "little"))))
write("test-degenerate-ed25519-noncanonical.pub.pem", pem("PUBLIC KEY", ed25519_spki((P + 1).to_bytes(32, "little"))))

# Tokens the degenerate keys would accept, made without any private key.
element = ("<authToken><sessionGUID>0d3c2b1a-forged-by-no-private-key</sessionGUID><requestorID>HBO</requestorID>"
           "<resourceID>HBO</resourceID><ttl>420000</ttl><issueTime>2026-01-15 12:00:00 +0000</issueTime>"
           "<mvpdId>Comcast_SSO</mvpdId></authToken>").encode()

# e = 1: s^1 mod n = s, so the PKCS#1 v1.5 encoding of the digest is its own signature.
digest_info = bytes.fromhex("3031300d060960864801650304020105000420") + hashlib.sha256(element).digest()
k = (n2048.bit_length() + 7) // 8
encoded = b"\x00\x01" + b"\xff" * (k - 3 - len(digest_info)) + b"\x00" + digest_info
assert int.from_bytes(encoded, "big") < n2048
# Identity point A: [S]B = R + [h]A holds for R = identity, S = 0, any message.
identity_signature = (1).to_bytes(32, "little") + bytes(32)

def token(signature):
    return "<signatureInfo>" + base64.b64encode(signature).decode() + "<signatureInfo>" + element.decode() + "\n"

write("test-forged-rsa-e1.token", token(encoded))
write("test-forged-ed25519-identity.token", token(identity_signature))
