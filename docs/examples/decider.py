#!/usr/bin/python3
"""An example decider for srt-proxy: line framing on stdin and stdout.

docs/examples/srt-proxy.service runs it beside srt-proxy: srt-proxy's
stdin is this decider's stdout and the other way round, so when either
ends the other sees the end of its stream and stops too.

The destinations it lets through are in the file named on its command
line, one hello pattern a line (see docs/decider-protocol.md):

    example.com             # this name, any port
    *.example.org           # any name under example.org
    203.0.113.10:8080       # this address and port only
    !private.example.com    # "!": denied, whatever else allows it

Blank lines and "#" comments are ignored. Of the requests to those
destinations, GET, HEAD and OPTIONS are let through; every other method is
refused with 403 and the reason "read-only egress: <METHOD> is not
allowed". Change decide() to decide otherwise: it sees every request's
method, host, port, path, query and headers.

By hand, with srt-proxy on a loopback port:

    coproc DECIDER { python3 decider.py allowed-domains; }
    srt-proxy --listen 127.0.0.1:3128 --decider-in 0 --decider-out 1 \\
        <&"${DECIDER[0]}" >&"${DECIDER[1]}"
"""
import json
import sys

READ_ONLY = {"GET", "HEAD", "OPTIONS"}


def load(path):
    """The hello's allowedDomains and deniedDomains, from the file."""
    allowed, denied = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            entry = line.split("#", 1)[0].strip()
            if entry.startswith("!"):
                entry = entry[1:].strip()
                lst = denied
            else:
                lst = allowed
            if entry and entry not in lst:  # entries must be unique
                lst.append(entry)
    return allowed, denied


def decide(req):
    """The verdict for one request (a "req" message)."""
    if req["method"] in READ_ONLY:
        return {"action": "allow"}
    # A reason is at most 1024 bytes: a long method is cut.
    return {"action": "deny", "status": 403,
            "reason": "read-only egress: %s is not allowed" % req["method"][:64]}


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: decider.py ALLOWED-DOMAINS-FILE")
    allowed, denied = load(sys.argv[1])
    inp, out = sys.stdin.buffer, sys.stdout.buffer

    def send(msg):
        out.write(json.dumps(msg, separators=(",", ":")).encode() + b"\n")
        out.flush()

    hello = json.loads(inp.readline() or b"null")
    if not isinstance(hello, dict) or hello.get("t") != "hello" or hello.get("proto") != 1:
        sys.exit("decider: not an srt-proxy hello: %r" % (hello,))
    send({"t": "hello", "proto": 1, "allowedDomains": allowed, "deniedDomains": denied})
    for line in inp:
        msg = json.loads(line)
        if msg.get("t") == "req":  # nothing else comes unless a verdict asks for a body
            send(dict({"t": "verdict", "id": msg["id"]}, **decide(msg)))


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, KeyboardInterrupt):
        pass  # srt-proxy has gone: so do we
