#!/usr/bin/env python3
"""A decider for srt-proxy in a few lines (line framing, on fd 3).

It allows the destinations named on its command line, lets GET requests
through and refuses POST; everything else gets a 405. Run it as

    srt-proxy --listen 127.0.0.1:8080 --decider-fd 3   (fd 3: one end of a socketpair)
    python3 decider.py 127.0.0.1 example.com           (fd 3: the other end)
"""
import json
import os
import sys

stream = os.fdopen(3, "r+b", buffering=0)
lines = (line for line in iter(stream.readline, b""))


def send(msg):
    stream.write(json.dumps(msg, separators=(",", ":")).encode() + b"\n")


hello = json.loads(next(lines))  # {"t":"hello","proto":1,"ext":["srt.v1","srt.mask.v1"]}: no extension is taken
assert hello["t"] == "hello" and hello["proto"] == 1, hello
send({"t": "hello", "proto": 1, "allowedDomains": sys.argv[1:], "deniedDomains": []})

for line in lines:
    req = json.loads(line)
    if req["t"] != "req":
        continue
    if req["method"] == "GET":
        send({"t": "verdict", "id": req["id"], "action": "allow"})
    elif req["method"] == "POST":
        send({"t": "verdict", "id": req["id"], "action": "deny", "status": 403, "reason": "no POST"})
    else:
        send({"t": "verdict", "id": req["id"], "action": "deny", "status": 405})
