"""tokenbench.py: the Python baseline for Benchmarks/run.

What a Python service would write with lxml and cryptography: Base64 transport
decoding, the signatureInfo block split off textually (the legacy form is not
XML), the token element parsed with lxml (entities not resolved, no network),
its fields read, ttl and issueTime turned into milliseconds, then the signature
checked with `cryptography` over the element's exact bytes, and the vendor
verifier's checks (expiry, requestor).

    python3 tokenbench.py parse  --corpus FILE [--seconds S] [--warmup S] [--count N]
    python3 tokenbench.py verify --corpus FILE --key PUB.pem --now EPOCH_MS [--requestor ID] [...]

Prints `RESULT <tokens/s> <tokens> <seconds>`.
"""
import argparse
import base64
import sys
import time
from datetime import datetime

from lxml import etree
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa

LEEWAY_MS = 30_000
OPEN = b"<signatureInfo>"
CLOSE = b"</signatureInfo>"
FIELDS = {"sessionGUID", "requestorID", "resourceID", "ttl", "issueTime", "mvpdId", "proxyMvpdId"}

PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)


class Rejected(Exception):
    pass


def split(xml: bytes):
    """(signature text, token element bytes) of `<signatureInfo>B64<signatureInfo><token…>`."""
    xml = xml.strip()
    if not xml.startswith(OPEN):
        raise Rejected("no signatureInfo")
    rest = xml[len(OPEN):]
    end = rest.find(b"<")
    if end < 0:
        raise Rejected("unterminated signatureInfo")
    signature, rest = rest[:end], rest[end:]
    if rest.startswith(OPEN):
        element = rest[len(OPEN):]
    elif rest.startswith(CLOSE):
        element = rest[len(CLOSE):]
    else:
        raise Rejected("unterminated signatureInfo")
    return signature, element


def decode(record: bytes):
    """The typed fields, the signed bytes and the signature text of one record."""
    record = record.strip()
    xml = record if record.startswith(b"<") else base64.b64decode(record, validate=True)
    signature, element = split(xml)
    root = etree.fromstring(element, PARSER)
    if root.tag not in ("authToken", "shortAuthorizationToken"):
        raise Rejected("not a media token")
    fields = {}
    for child in root:
        if child.tag in FIELDS:
            if child.tag in fields:
                raise Rejected("duplicate " + child.tag)
            fields[child.tag] = child.text or ""
    for required in ("requestorID", "resourceID", "ttl", "issueTime"):
        if required not in fields:
            raise Rejected("missing " + required)
    ttl = fields["ttl"]
    if not ttl.isdigit():
        raise Rejected("ttl")
    issued = int(datetime.strptime(fields["issueTime"], "%Y-%m-%d %H:%M:%S %z").timestamp() * 1000)
    return fields, issued, issued + int(ttl), element, signature


def load_key(path):
    with open(path, "rb") as handle:
        key = serialization.load_pem_public_key(handle.read())
    if isinstance(key, rsa.RSAPublicKey):
        return lambda signature, message: key.verify(signature, message, padding.PKCS1v15(), hashes.SHA256())
    if isinstance(key, ec.EllipticCurvePublicKey):
        return lambda signature, message: key.verify(signature, message, ec.ECDSA(hashes.SHA256()))
    if isinstance(key, ed25519.Ed25519PublicKey):
        return lambda signature, message: key.verify(signature, message)
    raise SystemExit("tokenbench.py: unsupported key type")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["parse", "verify"])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--key")
    parser.add_argument("--now", type=int, default=0)
    parser.add_argument("--requestor", default="TNT")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--warmup", type=float, default=0.5)
    parser.add_argument("--count", type=int)
    options = parser.parse_args()

    with open(options.corpus, "rb") as handle:
        tokens = [line for line in handle.read().split(b"\n") if line.strip()]
    verify = load_key(options.key) if options.mode == "verify" else None
    now = options.now

    def step(record):
        try:
            fields, issued, expiry, element, signature_text = decode(record)
        except (Rejected, ValueError, etree.XMLSyntaxError):
            return False
        if verify is None:
            return True
        try:
            verify(base64.b64decode(signature_text), element)
        except (InvalidSignature, ValueError):
            return False
        if now > expiry + LEEWAY_MS or issued > now + LEEWAY_MS:
            return False
        return fields["requestorID"] == options.requestor

    for index, token in enumerate(tokens):
        if not step(token):
            sys.exit(f"tokenbench.py: token {index + 1} does not pass {options.mode}")
    if options.count is not None:
        passed = sum(step(tokens[i % len(tokens)]) for i in range(options.count))
        print(f"COUNTED {options.count} {passed}")
        return

    def run(seconds):
        done = 0
        began = time.perf_counter()
        deadline = began + seconds
        count = len(tokens)
        while True:
            for index in range(64):
                step(tokens[(done + index) % count])
            done += 64
            if time.perf_counter() >= deadline:
                return done, time.perf_counter() - began

    if options.warmup > 0:
        run(options.warmup)
    done, elapsed = run(options.seconds)
    print(f"RESULT {done / elapsed:.1f} {done} {elapsed:.6f}")


if __name__ == "__main__":
    main()
