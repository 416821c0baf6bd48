#!/usr/bin/env python3
"""Regenerates Fuzz/Seeds/{FuzzEdgeAuth,FuzzCloudFront,FuzzCAT,FuzzSecureLink}/
from the CDN formats' known-answer vectors (Tests/CDNTokensTests/Fixtures/,
made by each format owner's own tool). The output is committed; rerun this
after a fixture changes:  python3 Fuzz/make-cdn-seeds.py"""
import base64, json, os, shutil

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
FIXTURES = os.path.join(ROOT, "Tests/CDNTokensTests/Fixtures")
SEEDS = os.path.join(ROOT, "Fuzz/Seeds")


def load(path):
    with open(os.path.join(FIXTURES, path), encoding="utf-8") as f:
        return json.load(f)


def write(target, name, data):
    name = "".join(c if c.isalnum() or c in "-_." else "-" for c in name)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(SEEDS, target, name), "wb") as f:
        f.write(data)


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


for target in ("FuzzEdgeAuth", "FuzzCloudFront", "FuzzCAT", "FuzzSecureLink"):
    shutil.rmtree(os.path.join(SEEDS, target), ignore_errors=True)
    os.makedirs(os.path.join(SEEDS, target))

for vector in load("Akamai/edgeauth-vectors.json")["vectors"]:
    write("FuzzEdgeAuth", vector["name"], vector["token"])

for vector in load("CloudFront/vectors.json")["vectors"]:
    write("FuzzCloudFront", vector["name"] + "-url", vector["signedURL"])
    if vector.get("policy"):
        write("FuzzCloudFront", vector["name"] + "-policy", vector["policy"])
    cookies = vector.get("cookies")
    if isinstance(cookies, dict):
        write("FuzzCloudFront", vector["name"] + "-cookies", "; ".join(f"{k}={v}" for k, v in cookies.items()))

cat = load("CAT/cat_vectors.json")
for vector in cat["issued"]:
    for form in ("mac0", "sign1"):
        if isinstance(vector.get(form), str):
            write("FuzzCAT", f"{vector['name']}-{form}", b64url_decode(vector[form]))
for vector in cat["peer"]:
    if isinstance(vector.get("token"), str):
        write("FuzzCAT", vector["name"] + "-text", vector["token"])
        try:
            write("FuzzCAT", vector["name"] + "-cbor", b64url_decode(vector["token"]))
        except Exception:
            pass

for vector in load("SecureLink/secure-link-vectors.json")["vectors"]:
    write("FuzzSecureLink", vector["name"] + "-token", f"{vector['md5']}&{vector['expires']}")
    write("FuzzSecureLink", vector["name"] + "-expression", vector["expression"])
