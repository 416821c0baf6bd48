#!/usr/bin/env python3
"""Writes secure-link-vectors.json: nginx secure_link_md5 values made with the
openssl command line exactly as the nginx documentation of
ngx_http_secure_link_module shows it
(https://nginx.org/en/docs/http/ngx_http_secure_link_module.html):

    echo -n '2147483647/s/link127.0.0.1 secret' | openssl md5 -binary | openssl base64 | tr +/ -_ | tr -d =

Each vector is an expression as a profile writes it (nginx's variables, the
secret written $secret), the values an edge would substitute, the text hashed
and the md5 the pipeline printed. Python only substitutes the values and runs
the pipeline through bash; the digest and its encoding are openssl's and tr's.

Run from this directory:  python3 make-secure-link-vectors.py
The output is deterministic. The secrets are for tests only.
"""
import json
import re
import shlex
import subprocess

PIPELINE = "echo -n {text} | openssl md5 -binary | openssl base64 | tr +/ -_ | tr -d ="

CASES = [
    # The documentation's own example: it prints _e4Nc3iduzkWRm01TBBNYw.
    dict(name="nginx-docs-example", expression="$secure_link_expires$uri$remote_addr $secret", secret="secret",
         expires=2147483647, uri="/s/link", remote_addr="127.0.0.1"),
    dict(name="folder", expression="$secure_link_expires$folder $secret", secret="tg-edge-secret-1",
         expires=1767229200, folder="/hls/tnt/"),
    dict(name="braces-and-separators", expression="${secure_link_expires}:${folder}:${remote_addr}:$secret",
         secret="k9", expires=1767229200, folder="/live/ch-1/", remote_addr="203.0.113.7"),
    dict(name="secret-first-url", expression="$secret$uri$secure_link_expires", secret="s3cr3t/with+signs=",
         expires=1767229200, uri="/vod/a.mp4"),
    dict(name="folder-ipv6", expression="$secure_link_expires$folder$remote_addr $secret", secret="secret",
         expires=1893456000, folder="/hls/cnn/", remote_addr="2001:db8::1"),
    dict(name="root-folder", expression="$secure_link_expires$folder$secret", secret="x" * 40,
         expires=1767229200, folder="/"),
    dict(name="braced-secret", expression="expires=${secure_link_expires}&path=${uri}&${secret}", secret="pepper",
         expires=1767229201, uri="/vod/movie-2.mp4"),
]

VARIABLE = re.compile(r"\$\{([a-z_]+)\}|\$([a-z_]+)")


def hashed_text(case):
    values = {"secure_link_expires": str(case["expires"]), "uri": case.get("uri"), "remote_addr": case.get("remote_addr"),
              "folder": case.get("folder"), "secret": case["secret"]}
    return VARIABLE.sub(lambda m: values[m.group(1) or m.group(2)], case["expression"])


def md5(text):
    command = PIPELINE.format(text=shlex.quote(text))
    return command, subprocess.run(["bash", "-c", command], check=True, capture_output=True, text=True).stdout.strip()


vectors = []
for case in CASES:
    text = hashed_text(case)
    command, digest = md5(text)
    vectors.append(dict(case, hashed=text, command=command, md5=digest))
assert vectors[0]["md5"] == "_e4Nc3iduzkWRm01TBBNYw", vectors[0]["md5"]

with open("secure-link-vectors.json", "w", encoding="utf-8") as out:
    json.dump({"made_by": subprocess.run(["openssl", "version"], capture_output=True, text=True).stdout.strip(),
               "command": "python3 make-secure-link-vectors.py", "vectors": vectors}, out, indent=2)
    out.write("\n")
