#!/usr/bin/env python3
"""Writes edgeauth-vectors.json: Akamai EdgeAuth 2.0 tokens made by the
format owner's own tool, akamai-edgeauth 0.3.2 (PyPI, module akamai.edgeauth),
so the tests can check that tokeninspect makes the same bytes for the same
inputs and accepts what the tool makes.

Run from this directory, with the venv the tests use:

    ~/.cache/tokeninspect-venv/bin/python3 make-edgeauth-vectors.py

Every time is fixed (start_time, end_time or window_seconds), so the output is
deterministic and re-running it changes nothing. The keys are for tests only.
"""
import json
from importlib.metadata import version

from akamai.edgeauth import EdgeAuth

KEY = "52a152a152a152a152a152a152a152a1"            # 16 bytes
KEY32 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
START = 1_767_225_600  # 2026-01-01T00:00:00Z
END = START + 3600

CASES = [
    dict(name="acl-folder", acl="/hls/tnt/*", start_time=START, end_time=END),
    dict(name="acl-gate-form-ip", acl="/hls/tnt/*", ip="203.0.113.7", start_time=START - 30, end_time=END),
    dict(name="acl-exact-path", acl="/hls/tnt/master.m3u8", start_time=START, end_time=END),
    dict(name="acl-no-start", acl="/hls/*", end_time=END),
    dict(name="acl-window", acl="/hls/*", start_time=START, window_seconds=600),
    dict(name="acl-escaped-slash", acl="%2fhls%2ftnt%2f*", start_time=START, end_time=END),
    dict(name="acl-several", acl=["/hls/tnt/*", "/hls/cnn/*", "/dash/*.mpd"], start_time=START, end_time=END),
    dict(name="acl-id-data", acl="/hls/tnt/*", session_id="session-42", payload="plan.premium", start_time=START, end_time=END),
    dict(name="acl-escape-early", acl="/hls/tnt/*", ip="2001:db8::1", session_id="viewer 7/a", payload="k=v&x=y!z", escape_early=True, start_time=START, end_time=END),
    dict(name="acl-escape-early-utf8", acl="/hls/*", payload="caf\u00e9 \u2603", escape_early=True, start_time=START, end_time=END),
    dict(name="acl-salt", acl="/hls/tnt/*", salt="pepper.1", start_time=START, end_time=END),
    dict(name="acl-key32", key=KEY32, acl="/*", start_time=START, end_time=END),
    dict(name="acl-sha1", algorithm="sha1", acl="/hls/tnt/*", start_time=START, end_time=END),
    dict(name="acl-md5", algorithm="md5", acl="/hls/tnt/*", ip="198.51.100.2", start_time=START, end_time=END),
    dict(name="url-plain", url="/hls/tnt/master.m3u8", start_time=START, end_time=END),
    dict(name="url-escape-early", url="/hls/tnt/master.m3u8", escape_early=True, start_time=START, end_time=END),
    dict(name="url-escape-early-ip-id", url="/vod/movie 1.mp4", ip="203.0.113.7", session_id="abc", escape_early=True, start_time=START, end_time=END),
    dict(name="url-salt-sha1", url="/vod/a.mp4", salt="s", algorithm="sha1", start_time=START, end_time=END),
    dict(name="url-md5-data", url="/vod/a.mp4", payload="d", algorithm="md5", end_time=END),
]


# The path an edge is asked for that each token covers (not an input of the
# tool: the tests verify each token against it).
REQUEST_PATHS = {
    "acl-folder": "/hls/tnt/seg-1.ts", "acl-gate-form-ip": "/hls/tnt/master.m3u8",
    "acl-exact-path": "/hls/tnt/master.m3u8", "acl-no-start": "/hls/cnn/a.ts", "acl-window": "/hls/x",
    "acl-escaped-slash": "/hls/tnt/seg-2.ts", "acl-several": "/dash/live/manifest.mpd",
    "acl-id-data": "/hls/tnt/a.ts", "acl-escape-early": "/hls/tnt/a.ts", "acl-escape-early-utf8": "/hls/a.ts",
    "acl-salt": "/hls/tnt/a.ts", "acl-key32": "/anything", "acl-sha1": "/hls/tnt/a.ts", "acl-md5": "/hls/tnt/a.ts",
    "url-plain": "/hls/tnt/master.m3u8", "url-escape-early": "/hls/tnt/master.m3u8",
    "url-escape-early-ip-id": "/vod/movie%201.mp4", "url-salt-sha1": "/vod/a.mp4", "url-md5-data": "/vod/a.mp4",
}


def make(case):
    options = {name: case[name] for name in ("ip", "session_id", "payload", "salt", "start_time", "end_time",
                                             "window_seconds", "escape_early", "algorithm") if name in case}
    auth = EdgeAuth(key=case.get("key", KEY), **options)
    token = auth.generate_url_token(case["url"]) if "url" in case else auth.generate_acl_token(case["acl"])
    out = dict(case)
    out.setdefault("key", KEY)
    out.setdefault("algorithm", "sha256")
    out.setdefault("escape_early", False)
    if isinstance(out.get("acl"), str):
        out["acl"] = [out["acl"]]
    out["token"] = token
    out["request_path"] = REQUEST_PATHS[case["name"]]
    return out


document = {
    "made_by": "akamai-edgeauth " + version("akamai-edgeauth"),
    "command": "~/.cache/tokeninspect-venv/bin/python3 make-edgeauth-vectors.py",
    "vectors": [make(case) for case in CASES],
}
with open("edgeauth-vectors.json", "w", encoding="utf-8") as out:
    json.dump(document, out, indent=2, ensure_ascii=True)
    out.write("\n")
