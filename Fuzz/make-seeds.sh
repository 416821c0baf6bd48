#!/usr/bin/env bash
# Regenerates Fuzz/Seeds/<Target>/ from Samples/tokens (every kind and
# transport form, valid and invalid) plus a few hand-made hostile shapes and
# every date shape of docs/FORMAT.md. The output is committed; rerun this after
# Samples/make-samples.sh changes the samples. Needs python3 only.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf Fuzz/Seeds
mkdir -p Fuzz/Seeds/{FuzzDecode,FuzzVerify,FuzzStream,FuzzDates,FuzzJSON}

python3 - <<'PY'
import base64, json, os, re, struct, urllib.parse

S = "Samples/tokens"
OUT = "Fuzz/Seeds"
ROOTS = ("authToken", "shortAuthorizationToken", "simpleAuthenticationToken", "simpleAuthorizationToken")

def write(target, name, data):
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(OUT, target, name), "wb") as f:
        f.write(data)

def records(path):
    """Cuts a samples file into records the way docs/FORMAT.md says: encoded
    tokens are one line; a raw token runs until its token element is closed
    and a signature block was seen."""
    out, current = [], None
    for line in open(path, encoding="utf-8").read().split("\n"):
        if current is not None:
            current.append(line)
            text = "\n".join(current)
            if any("</%s>" % r in text for r in ROOTS) and text.count("signatureInfo>") >= 2:
                out.append(text); current = None
            continue
        if not line.strip():
            continue
        if line.lstrip().startswith("<"):
            current = [line]
            text = line
            if any("</%s>" % r in text for r in ROOTS) and text.count("signatureInfo>") >= 2:
                out.append(text); current = None
        else:
            out.append(line)
    assert current is None, path
    return out

def decoded(record):
    """The raw XML behind an encoded record (None when it is raw already)."""
    body = record.strip()
    if body.startswith("<"):
        return None
    m = re.match(r"^[A-Za-z][A-Za-z0-9_.]*=", body)
    if m:
        body = body[m.end():]
    if "%" in body:
        body = urllib.parse.unquote(body)
        if body.startswith("<"):
            return body
    try:
        b = body.replace("-", "+").replace("_", "/")
        return base64.b64decode(b + "=" * (-len(b) % 4)).decode()
    except Exception:
        return None

valid = records(f"{S}/valid.txt")
invalid = records(f"{S}/invalid.txt")
assert len(valid) == 17 and len(invalid) == 12, (len(valid), len(invalid))
v1 = json.load(open(f"{S}/rest-v1.json"))["serializedToken"]
v2 = [d["token"]["serializedToken"] for d in json.load(open(f"{S}/rest-v2.json"))["decisions"]]

tokens = {}
for i, r in enumerate(valid, 1):
    tokens[f"valid-{i:02}"] = r
for i, r in enumerate(invalid, 1):
    tokens[f"invalid-{i:02}"] = r
tokens["rest-v1-token"] = v1
for i, t in enumerate(v2, 1):
    tokens[f"rest-v2-token-{i}"] = t

# Every encoded token also as its raw XML, and the raw ones in the forms they lack.
raw = {}
for name, r in list(tokens.items()):
    xml = decoded(r)
    if xml is not None:
        tokens[f"{name}-as-raw"] = xml
        raw[name] = xml
    elif r.lstrip().startswith("<"):
        raw[name] = r
media_raw = raw["valid-01"]
authn_raw = raw["valid-12"]
authz_raw = raw["valid-14"]
for kind, xml in (("media", media_raw), ("authn", authn_raw), ("authz", authz_raw)):
    b64 = base64.b64encode(xml.encode()).decode()
    tokens[f"form-{kind}-base64-unpadded"] = b64.rstrip("=")
    tokens[f"form-{kind}-base64url"] = base64.urlsafe_b64encode(xml.encode()).decode().rstrip("=")
    tokens[f"form-{kind}-base64-wrapped"] = "\n".join(b64[i:i + 76] for i in range(0, len(b64), 76))
    tokens[f"form-{kind}-percent-raw"] = "token=" + urllib.parse.quote(xml, safe="")
    tokens[f"form-{kind}-percent-base64"] = urllib.parse.quote(b64, safe="")
    tokens[f"form-{kind}-xml-declaration"] = '<?xml version="1.0" encoding="UTF-8"?>\n' + xml
    tokens[f"form-{kind}-bom"] = "\ufeff" + xml

# The signature block in every position and form, the signature wrapped (still valid).
m = re.match(r"^<signatureInfo>(.*?)<signatureInfo>(.*)$", media_raw, re.S)
sig, element = m.group(1), m.group(2)
wrapped = "\n  ".join(sig[i:i + 64] for i in range(0, len(sig), 64))
tokens["form-media-closed-after"] = f"{element}<signatureInfo>{sig}</signatureInfo>"
tokens["form-media-closed-before-wrapped"] = f"<signatureInfo>\n  {wrapped}\n</signatureInfo>\n{element}"
tokens["form-media-legacy-after"] = f"{element}<signatureInfo>{sig}<signatureInfo>"

# Hostile shapes the parser must refuse (each a typed error).
hostile = {
    "hostile-doctype": f'<!DOCTYPE authToken [<!ENTITY x "y">]><signatureInfo>{sig}<signatureInfo>{element}',
    "hostile-entity": f"<signatureInfo>{sig}<signatureInfo>" + element.replace("TNT</requestorID>", "&x;</requestorID>"),
    "hostile-xxe": f'<!DOCTYPE a [<!ENTITY e SYSTEM "file:///etc/passwd">]><signatureInfo>{sig}<signatureInfo>{element}',
    "hostile-laughs": '<!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
                      f"<signatureInfo>{sig}<signatureInfo>" + element.replace("TNT</requestorID>", "&b;</requestorID>"),
    "hostile-comment": f"<signatureInfo>{sig}<signatureInfo>" + element.replace("<ttl>", "<!-- c --><ttl>"),
    "hostile-pi": f"<signatureInfo>{sig}<signatureInfo>" + element.replace("<ttl>", "<?pi x?><ttl>"),
    "hostile-cdata-in-signature": f"<signatureInfo><![CDATA[{sig}]]><signatureInfo>{element}",
    "hostile-nested-root": f"<signatureInfo>{sig}<signatureInfo>" + element.replace("<ttl>", "<authToken/><ttl>"),
    "hostile-nested-signature": f"<signatureInfo>{sig}<signatureInfo>" + element.replace("<ttl>", "<signatureInfo>x</signatureInfo><ttl>"),
    "hostile-charrefs": f"<signatureInfo>{sig}<signatureInfo>" + element.replace("TNT</requestorID>", "&#84;&#x4E;&#84;&amp;&lt;&gt;&quot;&apos;</requestorID>"),
    "hostile-mixed": f"<signatureInfo>{sig}<signatureInfo>" + element.replace("<ttl>", "text<ttl>"),
    "hostile-duplicate": f"<signatureInfo>{sig}<signatureInfo>" + element.replace("<ttl>", "<ttl>1</ttl><ttl>"),
    "hostile-deep": f"<signatureInfo>{sig}<signatureInfo>" + element.replace("<ttl>", "<a>" * 20 + "x" + "</a>" * 20 + "<ttl>"),
    "hostile-namespaces": f"<signatureInfo>{sig}<signatureInfo>" + element.replace("<authToken>", '<authToken xmlns="urn:x" xmlns:p="urn:p" p:a="1">'),
    "hostile-utf16": "\ufeff<a/>".encode("utf-16-le"),
    "hostile-bad-utf8": b"<signatureInfo>AAAA<signatureInfo><authToken><requestorID>\xc0\xaf</requestorID></authToken>",
    "hostile-plus-as-space": base64.b64encode(media_raw.encode()).decode().replace("+", " "),
    "hostile-rss-resource": f"<signatureInfo>{sig}<signatureInfo>" + element.replace(
        "<resourceID>TNT</resourceID>",
        '<resourceID><![CDATA[<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>mun2</title>'
        '<item><title><![CDATA[Dia 2]]]]><![CDATA[></title><guid>2847811</guid><media:rating scheme="urn:mpaa">tv-pg</media:rating>'
        "</item></channel></rss>]]></resourceID>"),
    "hostile-ttl-overflow": f"<signatureInfo>{sig}<signatureInfo>" + element.replace("<ttl>420000</ttl>", "<ttl>9223372036854775807</ttl>"),
}
tokens.update(hostile)

for name, data in tokens.items():
    write("FuzzDecode", name, data)
    write("FuzzVerify", name, data)
# The verifier also reads its input as a stream: whole files, REST JSON documents.
for f in ("valid.txt", "invalid.txt", "rest-v1.json", "rest-v2.json"):
    write("FuzzVerify", "file-" + f.replace(".", "-"), open(f"{S}/{f}", "rb").read())

# FuzzStream: a header (cut count | flags, then UInt16 LE cut points) and a stream.
def stream_seed(payload, cuts, non_contiguous=False, byte_by_byte=False):
    header = len(cuts) | (0x20 if non_contiguous else 0) | (0x40 if byte_by_byte else 0)
    return bytes([header]) + b"".join(struct.pack("<H", c) for c in cuts) + payload

files = {f: open(f"{S}/{f}", "rb").read() for f in ("valid.txt", "invalid.txt", "rest-v1.json", "rest-v2.json")}
for f, payload in files.items():
    n = len(payload)
    base = f.replace(".", "-")
    write("FuzzStream", f"{base}-whole", stream_seed(payload, []))
    write("FuzzStream", f"{base}-cuts", stream_seed(payload, [n // 7 * k for k in range(1, 7)]))
    write("FuzzStream", f"{base}-cuts-noncontiguous", stream_seed(payload, [1, n // 3, n // 2, n - 1], non_contiguous=True))
mixed = "\n".join([valid[0], "", "   ", valid[15], valid[4], "not a token at all!", invalid[1],
                   '<?xml version="1.0"?>', valid[1], valid[2] + " trailing", valid[10] + "\r",
                   '{"serializedToken": "%s"}' % v1[:40], valid[13]]) + "\n"
write("FuzzStream", "mixed-records", stream_seed(mixed.encode(), [5, 100, 1000, 1001, 2500]))
small = "\n".join(["", valid[0], "<signatureInfo>AA<signatureInfo><authToken>", "  <ttl>1</ttl>", "</authToken>", valid[16]])
write("FuzzStream", "small-byte-by-byte", stream_seed(small.encode()[:1024], [], byte_by_byte=True))
write("FuzzStream", "leading-blank-json", stream_seed(b"\n\n  " + files["rest-v2.json"], [1, 3, 7]))

# FuzzJSON: REST documents (FuzzStream's header, then the document): the samples,
# every JSON construct the scanner must take, and the shapes it must refuse.
for f in ("rest-v1.json", "rest-v2.json"):
    payload = files[f]
    base = f.replace(".", "-")
    write("FuzzJSON", f"{base}-whole", stream_seed(payload, []))
    write("FuzzJSON", f"{base}-cuts", stream_seed(payload, [1, len(payload) // 3, len(payload) // 2, len(payload) - 2]))
short = v1[:24]
json_seeds = {
    "scalars": '{"a":0,"b":-0.5e+10,"c":1E-7,"d":true,"e":false,"f":null,"g":"x","serializedToken":"%s"}' % short,
    "escapes": '{"a":"\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\uD83D\\uDE00","serializ\\u0065dToken":"%s"}' % short,
    "utf8": '{"\u00e9":"\u20ac \U0001F600","serializedToken":"%s"}' % short,
    "skipped": '{"x":[{},{"a":[1,2,{"b":null}]},[]],"y":{"serializedToken":1},"serializedToken":"%s"}' % short,
    "v2-denial": '{"decisions":[{"resource":"TNT","authorized":false,"error":{"status":403,"details":"no"}},'
                 '{"resource":"TBS","token":{"notAfter":1,"serializedToken":"%s"}},"x",{"token":null}]}' % short,
    "ambiguous-twice": '{"serializedToken":"%s","serializedToken":"%s"}' % (short, short),
    "ambiguous-versions": '{"serializedToken":"%s","decisions":[]}' % short,
    "ambiguous-token": '{"decisions":[{"token":{"serializedToken":"%s","notAfter":1,"notAfter":2}}]}' % short,
    "top-level-array": '[{"serializedToken":"%s"}]' % short,
    "deep": '{"a":' + "[" * 40 + "]" * 40 + "}",
    "trailing-comma": '{"serializedToken":"%s",}' % short,
    "lone-surrogate": '{"a":"\\uD800","serializedToken":"%s"}' % short,
    "bad-number": '{"a":01,"serializedToken":"%s"}' % short,
}
for name, doc in json_seeds.items():
    write("FuzzJSON", name, stream_seed(doc.encode(), [3, 9]))
write("FuzzJSON", "bom-byte-by-byte", stream_seed(b"\xef\xbb\xbf " + json_seeds["scalars"].encode(), [], byte_by_byte=True))

# FuzzDates: every shape of docs/FORMAT.md, and the edges of the range.
dates = [
    "2011/03/19 02:29:34 GMT +0200", "2011/03/19 02:29:34 GMT -0530", "2011/03/19 02:29:34 GMT+0000",
    "2011/03/19 02:29:34 GMT", "2026/01/15 13:00:00 GMT +0000",
    "2016-03-17 15:01:31 -0700", "2016-03-17 15:01:31 +05:45", "2026-01-15 12:00:00 +0000",
    "2016-03-17T22:01:31.250Z", "2016-03-18T00:01:31+02:00", "2016-03-17t22:01:31-0100",
    "2016-03-17T22:01:31.123456789Z", "2016-03-17T22:01:31,5+14:00", "2024-02-29T12:00:00Z",
    "1458252091000", "0", "253402300799999",
    "0001-01-01T00:00:00Z", "0001-01-01T00:00:00-14:00", "9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59-0100",
    "1900-02-28 23:59:59 +1400", "2000/02/29 00:00:00 GMT -1400",
]
for i, d in enumerate(dates, 1):
    write("FuzzDates", f"date-{i:02}", d)
PY
# FuzzRESP: replies a replay store meets, and malformed ones. Layout as in
# Fuzz/Sources/FuzzRESP/RESPOracle.swift: a header byte (cut count, bit 5
# byte-by-byte, bit 6 tight limits), UInt16 LE cut points, the stream.
mkdir -p Fuzz/Seeds/FuzzRESP
python3 - <<'PY'
import os, struct
OUT = "Fuzz/Seeds/FuzzRESP"
def seed(name, stream, cuts=(), byte_by_byte=False, tight=False):
    header = len(cuts) | (0x20 if byte_by_byte else 0) | (0x40 if tight else 0)
    data = bytes([header]) + b"".join(struct.pack("<H", c) for c in cuts) + stream
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
store = b"+OK\r\n$-1\r\n+OK\r\n-OOM command not allowed when used memory > 'maxmemory'.\r\n+PONG\r\n"
seed("store-replies", store, cuts=(1, 5, 6, 11, 40))
seed("store-replies-byte-by-byte", store, byte_by_byte=True)
seed("errors", b"-READONLY You can't write against a read only replica.\r\n-NOPERM no\r\n-WRONGPASS invalid\r\n", cuts=(3,))
seed("integers", b":0\r\n:-1\r\n:9223372036854775807\r\n:-9223372036854775808\r\n", cuts=(2, 30))
seed("bulk-binary", b"$6\r\n\r\n\x00\xff\r\n\r\n$0\r\n\r\n", cuts=(4, 5, 9), byte_by_byte=True)
seed("nested-arrays", b"*3\r\n:1\r\n*2\r\n$1\r\nx\r\n*0\r\n*-1\r\n+done\r\n", cuts=(4, 8, 12, 20))
seed("info-reply", b"$52\r\n# Memory\r\nused_memory:871016\r\nmaxmemory_policy:noevic\r\n", cuts=(5,))
seed("tight-limits", b"*2\r\n$4\r\nabcd\r\n+0123456789012345678901234\r\n", tight=True)
seed("overflow", b":9223372036854775808\r\n", cuts=(10,))
seed("resp3", b"%1\r\n+a\r\n:1\r\n")
seed("bare-lf", b"+OK\n")
seed("cr-without-lf", b"+OK\rX\r\n", byte_by_byte=True)
seed("truncated", b"*2\r\n$5\r\nhel", cuts=(2,))
PY

python3 Fuzz/make-cdn-seeds.py   # the CDN targets, from the formats' known-answer vectors

echo "seeds: $(for t in Fuzz/Seeds/*; do printf '%s=%s ' "$(basename "$t")" "$(ls "$t" | wc -l)"; done)"
