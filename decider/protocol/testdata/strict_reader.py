#!/usr/bin/env python3
"""A strict reader of decider-protocol messages, written from
docs/decider-protocol.md alone (not from the Go codec), to prove that the
document is enough to write a strict decider.

python_vectors_test.go runs it over every case in
shared/decider-protocol/vectors and framing and requires the Go codec's
answers. It reads one JSON object per line on stdin and answers one per line
on stdout:

  {"message": "<base64 wire bytes>", "dir": "to-proxy"|"to-decider", "ext": bool,
   "mask"?: bool}
      -> {"error": "<reason>"} or
         {"ok": true, "t": ..., "action"?: ..., "id"?: ..., "kind"?: ...,
          "canonical": "<base64 canonical bytes>" (unless the query says
          "summary": true)}
  {"stream": "<base64 bytes>", "framing": "line"|"length", "max": N}
      -> {"frames": ["<base64>", ...], "end": "eof"|"truncated"|"<reason>"}

Only the standard library; no third-party JSON parser, because the
document's JSON rules (duplicate keys, lone surrogates, integer spelling,
nesting) are stricter than any parser's defaults.
"""

import base64
import json
import re
import sys

MIB = 1 << 20
MAX_TO_PROXY = 1048576  # a decider->proxy message
MAX_REQ = 1048576  # a req
MAX_TO_DECIDER = 44739299  # any proxy->decider message: a full body
MAX_ID = (1 << 53) - 1
MAX_DEPTH = 32
MAX_BODY = 33554432  # need_body's max, 32 MiB


class Refused(Exception):
    """The message is refused with a fixed reason; the link dies."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


# ---------------------------------------------------------------------------
# JSON, as the document's "Validation" and "Errors" sections say: RFC 8259
# syntax, then nesting, then one object, then null / lone surrogate
# (whichever comes first), then duplicate keys.


class Num:
    """A JSON number as spelled: integral when it has no fraction and no
    exponent."""

    def __init__(self, text):
        self.text = text
        self.integral = not any(c in text for c in ".eE")
        self.value = int(text) if self.integral else float(text)


class Obj:
    """A JSON object: its members in wire order."""

    def __init__(self):
        self.members = []

    def keys(self):
        return [k for k, _ in self.members]

    def get(self, key, default=None):
        for k, v in self.members:
            if k == key:
                return v
        return default

    def __contains__(self, key):
        return any(k == key for k, _ in self.members)


class Null:
    pass


NULL = Null()

SPACE = re.compile(r"[ \t\n\r]*")
NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
HEX = "0123456789abcdefABCDEF"
PLAIN = re.compile(r'[^"\\\x00-\x1f]*')
SURROGATE = re.compile("[\ud800-\udfff]")


class Parser:
    """An iterative RFC 8259 parser that stops at the first syntax error or
    at a 33rd level of nesting. It notes, in text order, the first null or
    lone surrogate, and whether any object repeats a key."""

    def __init__(self, text):
        self.s = text
        self.i = 0
        self.first_bad = None  # "null in frame" or "lone surrogate in frame"
        self.duplicate = False

    def fail(self):
        raise Refused("frame is not valid JSON")

    def ws(self):
        self.i = SPACE.match(self.s, self.i).end()

    def note(self, reason):
        if self.first_bad is None:
            self.first_bad = reason

    def string(self):
        s, i = self.s, self.i + 1
        out = []
        while True:
            run = PLAIN.match(s, i)  # the characters that stand for themselves
            out.append(run.group())
            i = run.end()
            if i >= len(s):
                self.fail()
            c = s[i]
            if c == '"':
                break
            if c != "\\":  # a raw C0 control
                self.fail()
            if i + 1 >= len(s):
                self.fail()
            e = s[i + 1]
            if e in ESCAPES:
                out.append(ESCAPES[e])
                i += 2
                continue
            if e != "u":
                self.fail()
            h = s[i + 2 : i + 6]
            if len(h) != 4 or any(x not in HEX for x in h):
                self.fail()
            out.append(chr(int(h, 16)))
            i += 6
        self.i = i + 1
        value = "".join(out)
        if not SURROGATE.search(value):
            return value
        # Pair escaped surrogates; a surrogate left alone is a lone one.
        # (Raw surrogates cannot occur: the text came from valid UTF-8.)
        paired, k = [], 0
        while k < len(value):
            c = value[k]
            if 0xD800 <= ord(c) <= 0xDBFF and k + 1 < len(value) and 0xDC00 <= ord(value[k + 1]) <= 0xDFFF:
                paired.append(chr(0x10000 + ((ord(c) - 0xD800) << 10) + (ord(value[k + 1]) - 0xDC00)))
                k += 2
                continue
            if 0xD800 <= ord(c) <= 0xDFFF:
                self.note("lone surrogate in frame")
            paired.append(c)
            k += 1
        return "".join(paired)

    def scalar(self):
        s, i = self.s, self.i
        if i >= len(s):
            self.fail()
        c = s[i]
        if c == '"':
            return self.string()
        for word, value in (("true", True), ("false", False), ("null", NULL)):
            if s.startswith(word, i):
                self.i = i + len(word)
                if value is NULL:
                    self.note("null in frame")
                return value
        m = NUMBER.match(s, i)
        if not m:
            self.fail()
        self.i = m.end()
        return Num(m.group())

    def parse(self):
        # Each stack entry: [container, pending key (objects), seen keys].
        stack = []
        result = None
        self.ws()
        while True:
            # Read one value (or open a container).
            if self.i >= len(self.s):
                self.fail()
            c = self.s[self.i]
            if c in "{[":
                self.i += 1
                container = Obj() if c == "{" else []
                stack.append([container, None, set()])
                if len(stack) > MAX_DEPTH:
                    # The parse stops here: whichever comes first in the
                    # text, a syntax error or the 33rd level.
                    raise Refused("frame nested too deeply")
                self.ws()
                close = "}" if c == "{" else "]"
                if self.i < len(self.s) and self.s[self.i] == close:
                    self.i += 1
                    value = stack.pop()[0]
                else:
                    if c == "{":
                        self.key(stack[-1])
                    continue
            else:
                value = self.scalar()
            # Attach the value, then close containers as far as they end.
            while True:
                if not stack:
                    self.ws()
                    if self.i != len(self.s):
                        self.fail()
                    return value
                top = stack[-1]
                if isinstance(top[0], Obj):
                    top[0].members.append((top[1], value))
                else:
                    top[0].append(value)
                self.ws()
                if self.i >= len(self.s):
                    self.fail()
                c = self.s[self.i]
                self.i += 1
                if c == ",":
                    self.ws()
                    if isinstance(top[0], Obj):
                        self.key(top)
                    break
                if c == ("}" if isinstance(top[0], Obj) else "]"):
                    value = stack.pop()[0]
                    continue
                self.fail()

    def key(self, top):
        if self.i >= len(self.s) or self.s[self.i] != '"':
            self.fail()
        k = self.string()
        if k in top[2]:
            self.duplicate = True
        top[2].add(k)
        top[1] = k
        self.ws()
        if self.i >= len(self.s) or self.s[self.i] != ":":
            self.fail()
        self.i += 1
        self.ws()


def parse_frame(data):
    try:
        text = data.decode("utf-8", errors="strict")
    except UnicodeDecodeError:
        raise Refused("frame is not UTF-8")
    p = Parser(text)
    value = p.parse()
    if not isinstance(value, Obj):
        raise Refused("frame is not one JSON object")
    if p.first_bad:
        raise Refused(p.first_bad)
    if p.duplicate:
        raise Refused("duplicate key in frame")
    return value


# ---------------------------------------------------------------------------
# Field rules.

TCHAR = set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def is_control(c):
    o = ord(c)
    return o < 0x20 or o == 0x7F or 0x80 <= o <= 0x9F


def no_controls(s):
    return not any(is_control(c) for c in s)


def no_controls_but_tab(s):
    return not any(is_control(c) and c != "\t" for c in s)


def is_token(s):
    return s != "" and all(c in TCHAR for c in s)


def is_header_name(s):
    return is_token(s) and s == s.lower()


def is_int(v, lo, hi):
    return isinstance(v, Num) and v.integral and lo <= v.value <= hi


def is_str(v):
    return isinstance(v, str)


def utf8_len(s):
    return len(s.encode("utf-8"))


def is_id(v):
    return is_int(v, 1, MAX_ID)


LABEL = re.compile(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\Z")
PORT = re.compile(r"[1-9][0-9]{0,4}\Z")
IPV4 = re.compile(r"(0|[1-9][0-9]{0,2})(\.(0|[1-9][0-9]{0,2})){3}\Z")


def is_dns_name(s):
    if not s or len(s) > 253:
        return False
    labels = s.split(".")
    if not all(LABEL.match(l) for l in labels):
        return False
    return labels[-1][0].isalpha()


def is_ipv4(s):
    if not IPV4.match(s):
        return False
    return all(int(p) <= 255 for p in s.split("."))


HEXGROUP = re.compile(r"[0-9a-fA-F]{1,4}\Z")


def ipv6_groups(s):
    """The eight 16-bit groups of an IPv6 literal in RFC 4291 text form
    (1-4 hex digits a group, either case, one '::' at most, the last 32
    bits optionally a dotted IPv4 literal), or None."""
    if s.count("::") > 1:
        return None
    tail = []
    if "." in s:
        head, _, v4 = s.rpartition(":")
        if not is_ipv4(v4):
            return None
        n = [int(x) for x in v4.split(".")]
        tail = [n[0] << 8 | n[1], n[2] << 8 | n[3]]
        s = head + ":" if head.endswith(":") else head
        if not head:
            return None
    def groups(part):
        if part == "":
            return []
        out = []
        for g in part.split(":"):
            if not HEXGROUP.match(g):
                return None
            out.append(int(g, 16))
        return out
    if "::" in s:
        left, right = s.split("::")
        lg, rg = groups(left), groups(right)
        if lg is None or rg is None:
            return None
        missing = 8 - len(lg) - len(rg) - len(tail)
        if missing < 1:
            return None
        return lg + [0] * missing + rg + tail
    g = groups(s)
    if g is None or len(g) + len(tail) != 8:
        return None
    return g + tail


def is_ipv6(s):
    return ":" in s and ipv6_groups(s) is not None


def is_ipv4_mapped(s):
    g = ipv6_groups(s)
    return g[:6] == [0, 0, 0, 0, 0, 0xFFFF]


def is_port(s):
    return bool(PORT.match(s)) and 1 <= int(s) <= 65535


def is_domain_entry(s):
    """An allowedDomains or deniedDomains entry ("List entries")."""
    if not is_str(s) or s == "" or "%" in s:
        return False
    if is_ipv6(s):  # bare IPv6: no port
        return True
    if s.startswith("["):
        end = s.find("]")
        if end < 0:
            return False
        host, rest = s[1:end], s[end + 1 :]
        if rest and (not rest.startswith(":") or not is_port(rest[1:])):
            return False
        return is_ipv6(host)
    host = s
    if ":" in s:
        host, port = s.rsplit(":", 1)
        if not is_port(port):
            return False
    if host.startswith("*."):
        name = host[2:]
        return is_dns_name(name) and len(name.split(".")) >= 2
    return is_dns_name(host) or is_ipv4(host)


def is_address_entry(s):
    """A deniedResolvedAddresses entry ("List entries"): an address, and
    optionally / and a prefix length."""
    if not is_str(s) or s == "":
        return False
    addr, prefix = s, None
    if "/" in s:
        addr, prefix = s.split("/", 1)
        if not re.match(r"[0-9]{1,3}\Z", prefix):
            return False
        prefix = int(prefix)
    if is_ipv4(addr):
        return prefix is None or prefix <= 32
    if "%" in addr:  # an IPv6 zone is allowed and ignored
        addr = addr[: addr.index("%")]
        if not is_ipv6(addr):
            return False
    if not is_ipv6(addr):
        return False
    if prefix is None:
        return True
    return prefix <= 128 and not (is_ipv4_mapped(addr) and prefix < 96)


def is_unique_list(v, item, nonempty):
    if not isinstance(v, list) or (nonempty and not v):
        return False
    if not all(item(x) for x in v):
        return False
    return len(set(v)) == len(v)


# ---------------------------------------------------------------------------
# Messages.

# The reference extension this reader knows.
SRT_V1 = "srt.v1"
MASK_V1 = "srt.mask.v1"
EXT_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}\Z")

SET_FORBIDDEN = {
    "authorization", "proxy-authorization", "cookie", "x-api-key", "host",
    "content-length", "transfer-encoding", "connection", "upgrade", "te",
    "trailer", "keep-alive", "proxy-connection",
}
FRAMING_HEADERS = {
    "host", "content-length", "transfer-encoding", "connection", "upgrade",
    "te", "trailer", "keep-alive", "proxy-connection",
}


def fold(name):
    """A header name with '_' and '.' read as '-'."""
    return name.replace("_", "-").replace(".", "-")


def only_keys(obj, allowed, bad):
    for k in obj.keys():
        if k not in allowed:
            raise Refused(bad)


def require(cond, bad):
    if not cond:
        raise Refused(bad)


def header_map(v, allow_empty_list, bad):
    """A non-empty object of lower-case token names to lists of values:
    at most 190 values (a name with [] counting as one) and 64 KiB of names
    and values."""
    require(isinstance(v, Obj) and v.members, bad)
    count, size = 0, 0
    for name, values in v.members:
        require(is_header_name(name), bad)
        require(isinstance(values, list), bad)
        require(allow_empty_list or values, bad)
        size += utf8_len(name)
        count += max(1, len(values))
        for x in values:
            require(is_str(x) and no_controls_but_tab(x), bad)
            size += utf8_len(x)
    require(count <= 190 and size <= 64 * 1024, bad)


def check_hello_to_decider(m, ext):
    bad = "bad hello"
    allowed = ["t", "proto"] + (["ext"] if ext else [])
    only_keys(m, allowed, bad)
    require(is_int(m.get("proto"), 1, 1), bad)
    if "ext" in m:
        require(is_unique_list(m.get("ext"), lambda x: is_str(x) and bool(EXT_NAME.match(x)), True), bad)


def check_hello_to_proxy(m, ext, mask):
    bad = "bad hello"
    only_keys(m, ["t", "proto", "allowedDomains", "deniedDomains", "ext", "deniedResolvedAddresses"], bad)
    require(is_int(m.get("proto"), 1, 1), bad)
    for key in ("allowedDomains", "deniedDomains"):
        require(key in m and is_unique_list(m.get(key), is_domain_entry, False), bad)
    accepted = []
    if "ext" in m:
        require(ext, bad)  # only when offered: srt.v1, and srt.mask.v1 with it
        require(is_unique_list(m.get("ext"), lambda x: is_str(x) and bool(EXT_NAME.match(x)), True), bad)
        accepted = m.get("ext")
        require(all(x == SRT_V1 or (x == MASK_V1 and mask) for x in accepted), bad)
        require(MASK_V1 not in accepted or SRT_V1 in accepted, bad)
    if "deniedResolvedAddresses" in m:
        require(SRT_V1 in accepted, bad)
        require(is_unique_list(m.get("deniedResolvedAddresses"), is_address_entry, True), bad)


def check_update(m):
    bad = "bad update frame"
    only_keys(m, ["t", "allowedDomains", "deniedDomains", "deniedResolvedAddresses"], bad)
    for key in ("allowedDomains", "deniedDomains"):
        require(key in m and is_unique_list(m.get(key), is_domain_entry, False), bad)
    if "deniedResolvedAddresses" in m:
        require(is_unique_list(m.get("deniedResolvedAddresses"), is_address_entry, True), bad)


def check_verdict(m, mask):
    bad = "bad verdict frame"
    require(is_id(m.get("id")), bad)
    action = m.get("action")
    if action == "allow":
        only_keys(m, ["t", "id", "action", "setHeaders", "removeHeaders", "cred", "credential"] + (["inject"] if mask else []), bad)
        if "inject" in m:
            require(is_unique_list(m.get("inject"), is_mask_id, True), bad)
        if "setHeaders" in m:
            sh = m.get("setHeaders")
            header_map(sh, True, bad)
            for name, _ in sh.members:
                require(fold(name) not in SET_FORBIDDEN, bad)
        if "removeHeaders" in m:
            rh = m.get("removeHeaders")
            require(is_unique_list(rh, lambda x: is_str(x) and is_header_name(x), True), bad)
            require(len(rh) <= 190 and sum(utf8_len(x) for x in rh) <= 64 * 1024, bad)
            require(not any(fold(x) in FRAMING_HEADERS for x in rh), bad)
        require(("cred" in m) == ("credential" in m), bad)
        if "cred" in m:
            cred = m.get("cred")
            require(is_str(cred) and cred != "" and no_controls(cred), bad)
            c = m.get("credential")
            require(is_str(c) and 1 <= len(c) <= 8192 and all("\x21" <= x <= "\x7e" for x in c), bad)
    elif action == "deny":
        only_keys(m, ["t", "id", "action", "status", "reason"], bad)
        require(is_int(m.get("status"), 400, 599), bad)
        if "reason" in m:
            r = m.get("reason")
            require(is_str(r) and 1 <= utf8_len(r) <= 1024 and no_controls_but_tab(r), bad)
    elif action == "need_body":
        only_keys(m, ["t", "id", "action", "max"], bad)
        require(is_int(m.get("max"), 1, MAX_BODY), bad)
    else:
        raise Refused(bad)


MASK_ID = re.compile(r"[A-Za-z0-9._-]{1,64}\Z")
SENTINEL = re.compile(r"[A-Za-z0-9._~+/=-]{16,8192}\Z")
AWS_ROLES = ("accessKeyId", "secretAccessKey", "sessionToken")


def is_mask_id(x):
    return is_str(x) and bool(MASK_ID.match(x))


def check_masks(m):
    """A masks message alone: its own fields ("bad masks frame"), then the
    link rules among its masks, as a link that held none would judge them."""
    bad = "bad masks frame"
    only_keys(m, ["t", "masks", "drop"], bad)
    require(("masks" in m) != ("drop" in m), bad)
    if "drop" in m:
        require(is_unique_list(m.get("drop"), is_mask_id, True), bad)
        return
    masks = m.get("masks")
    require(isinstance(masks, list) and masks, bad)
    for x in masks:
        require(isinstance(x, Obj), bad)
        only_keys(x, ["id", "sentinel", "value", "aws"], bad)
        require(is_mask_id(x.get("id")), bad)
        require(is_str(x.get("sentinel")) and bool(SENTINEL.match(x.get("sentinel"))), bad)
        v = x.get("value")
        require(is_str(v) and 1 <= utf8_len(v) <= 65536 and "\x00" not in v, bad)
        if "aws" in x:
            a = x.get("aws")
            require(isinstance(a, Obj), bad)
            only_keys(a, ["pair", "role"], bad)
            require(is_mask_id(a.get("pair")) and a.get("role") in AWS_ROLES, bad)
    for i, x in enumerate(masks):
        for y in masks[:i]:
            if x.get("id") == y.get("id"):
                raise Refused("mask id %s given twice" % x.get("id"))
            if x.get("sentinel") in y.get("sentinel") or y.get("sentinel") in x.get("sentinel"):
                raise Refused("sentinel of mask %s overlaps mask %s" % (x.get("id"), y.get("id")))
            if "aws" in x and "aws" in y:
                a, b = x.get("aws"), y.get("aws")
                if a.get("pair") == b.get("pair") and a.get("role") == b.get("role"):
                    raise Refused("aws pair %s has two masks of role %s" % (a.get("pair"), a.get("role")))


REQ_KEYS = ["t", "id", "method", "host", "port", "hostHeader", "sni", "path", "query", "headers"]


def check_req(m, ext):
    bad = "bad req frame"
    only_keys(m, REQ_KEYS + (["kind", "user"] if ext else []), bad)
    require(is_id(m.get("id")), bad)
    method = m.get("method")
    require(is_str(method) and is_token(method), bad)
    host = m.get("host")
    require(is_str(host) and host != "" and host == host.lower() and no_controls(host) and utf8_len(host) <= 8192, bad)
    require(is_int(m.get("port"), 1, 65535), bad)
    if "hostHeader" in m:
        h = m.get("hostHeader")
        require(is_str(h) and h != "" and no_controls_but_tab(h) and utf8_len(h) <= 8192, bad)
    if "sni" in m:
        s = m.get("sni")
        require(is_str(s) and s != "" and s == s.lower() and no_controls(s) and utf8_len(s) <= 8192, bad)
    path = m.get("path")
    require(is_str(path) and path != "" and no_controls(path) and utf8_len(path) <= 8192, bad)
    if "query" in m:
        q = m.get("query")
        require(is_str(q) and q != "" and no_controls(q), bad)
    if "headers" in m:
        hs = m.get("headers")
        header_map(hs, False, bad)
        require("host" not in hs, bad)
    if ext:
        kind = m.get("kind")
        require(kind in ("connect", "socks", "http"), bad)
        if "user" in m:
            u = m.get("user")
            require(is_str(u) and u != "" and no_controls(u), bad)
        if kind in ("connect", "socks"):
            require(method == "CONNECT" and path == "*" and "query" not in m, bad)
        if kind == "socks":
            require(not any(k in m for k in ("hostHeader", "sni", "headers")), bad)
        if kind == "http":
            require(method != "CONNECT", bad)


B64 = re.compile(r"[A-Za-z0-9+/]*={0,2}\Z")


def check_body(m):
    bad = "bad body frame"
    only_keys(m, ["t", "id", "data", "cut"], bad)
    require(is_id(m.get("id")), bad)
    data = m.get("data")
    # Standard base64, padded, no whitespace, in canonical form: exactly
    # what a standard encoder writes for the bytes it decodes to.
    require(is_str(data) and len(data) % 4 == 0 and B64.match(data), bad)
    raw = base64.b64decode(data, validate=True)
    require(base64.b64encode(raw).decode() == data, bad)
    require(len(raw) <= MAX_BODY, bad)
    if "cut" in m:
        require(m.get("cut") is True, bad)


def check_refused(m):
    bad = "bad refused frame"
    only_keys(m, ["t", "id", "reason"], bad)
    require(is_id(m.get("id")), bad)
    r = m.get("reason")
    require(is_str(r) and 1 <= utf8_len(r) <= 1024 and no_controls_but_tab(r), bad)


def check_sync(m):
    bad = "bad sync frame"
    only_keys(m, ["t", "id"], bad)
    require(is_id(m.get("id")), bad)


# ---------------------------------------------------------------------------
# The canonical form: compact, fields in the document's order, strings
# escaped as JavaScript's JSON.stringify escapes them.

ORDER = {
    "hello": ["t", "proto", "allowedDomains", "deniedDomains", "ext", "deniedResolvedAddresses"],
    "req": REQ_KEYS + ["kind", "user"],
    "verdict": ["t", "id", "action", "setHeaders", "removeHeaders", "cred", "credential", "inject", "status", "reason", "max"],
    "masks": ["t", "masks", "drop"],
    "body": ["t", "id", "data", "cut"],
    "update": ["t", "allowedDomains", "deniedDomains", "deniedResolvedAddresses"],
    "refused": ["t", "id", "reason"],
    "sync": ["t", "id"],
}

SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f]')


def enc_string(s):
    def escape(m):
        c = m.group()
        return SHORT.get(c) or "\\u%04x" % ord(c)

    return '"' + NEEDS_ESCAPE.sub(escape, s) + '"'


def enc(v, order=None):
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, Num):
        return str(v.value)
    if isinstance(v, str):
        return enc_string(v)
    if isinstance(v, list):
        return "[" + ",".join(enc(x) for x in v) + "]"
    if isinstance(v, Obj):
        members = v.members
        if order is not None:
            members = sorted(members, key=lambda kv: order.index(kv[0]))
        return "{" + ",".join(enc_string(k) + ":" + enc(x) for k, x in members) + "}"
    raise AssertionError(v)


# ---------------------------------------------------------------------------

TO_PROXY = {"hello", "verdict", "update", "masks"}
MASK_ORDER = ["id", "sentinel", "value", "aws"]
AWS_ORDER = ["pair", "role"]
TO_DECIDER = {"hello", "req", "body", "refused", "sync"}
EXT_ONLY = {"update", "refused", "sync"}


def read_message(data, direction, ext, mask=False, canonical=True):
    # "Checks, in order": the direction's size limit first, a req's own
    # after its t is known.
    if len(data) > (MAX_TO_PROXY if direction == "to-proxy" else MAX_TO_DECIDER):
        raise Refused("oversized frame")
    m = parse_frame(data)
    t = m.get("t")
    carried = TO_PROXY if direction == "to-proxy" else TO_DECIDER
    if not is_str(t) or t not in carried or (t in EXT_ONLY and not ext) or (t == "masks" and not mask):
        raise Refused("unexpected message")
    if t == "req" and len(data) > MAX_REQ:
        raise Refused("oversized frame")
    if t == "hello":
        if direction == "to-proxy":
            check_hello_to_proxy(m, ext, mask)
        else:
            check_hello_to_decider(m, ext)
    elif t == "verdict":
        check_verdict(m, mask)
    elif t == "masks":
        check_masks(m)
    elif t == "update":
        check_update(m)
    elif t == "req":
        check_req(m, ext)
    elif t == "body":
        check_body(m)
    elif t == "refused":
        check_refused(m)
    elif t == "sync":
        check_sync(m)
    out = {"ok": True, "t": t}
    if t == "verdict":
        out["action"] = m.get("action")
    if t in ("req", "verdict", "body", "refused", "sync"):
        out["id"] = m.get("id").value
    if t == "req" and ext:
        out["kind"] = m.get("kind")
    if canonical:
        out["canonical"] = base64.b64encode(canonical_text(m, t).encode("utf-8")).decode()
    return out


def canonical_text(m, t):
    if t != "masks" or "masks" not in m:
        return enc(m, ORDER[t])

    def one(x):
        members = sorted(x.members, key=lambda kv: MASK_ORDER.index(kv[0]))
        parts = []
        for k, v in members:
            parts.append(enc_string(k) + ":" + (enc(v, AWS_ORDER) if k == "aws" else enc(v)))
        return "{" + ",".join(parts) + "}"

    return '{"t":"masks","masks":[' + ",".join(one(x) for x in m.get("masks")) + "]}"


def read_frames(stream, framing, limit):
    frames, i = [], 0
    if framing == "line":
        while True:
            nl = stream.find(b"\n", i)
            if nl < 0:
                rest = stream[i:]
                if len(rest) > limit:
                    return frames, "oversized frame"
                return frames, ("eof" if not rest else "truncated")
            line = stream[i:nl]
            content = len(line) - (1 if line.endswith(b"\r") else 0)
            if content > limit:
                return frames, "oversized frame"
            if line.endswith(b"\r"):
                return frames, "carriage return before newline"
            if not line:
                return frames, "blank line"
            frames.append(line)
            i = nl + 1
    while True:
        if i == len(stream):
            return frames, "eof"
        if len(stream) - i < 4:
            return frames, "truncated"
        n = int.from_bytes(stream[i : i + 4], "big")
        if n > limit:
            return frames, "oversized frame"
        if len(stream) - i - 4 < n:
            return frames, "truncated"
        frames.append(stream[i + 4 : i + 4 + n])
        i += 4 + n


def main():
    sys.setrecursionlimit(100)  # the parser must not need recursion
    for line in sys.stdin:
        case = json.loads(line)
        if "stream" in case:
            frames, end = read_frames(base64.b64decode(case["stream"]), case["framing"], case["max"])
            out = {"frames": [base64.b64encode(f).decode() for f in frames], "end": end}
        else:
            try:
                out = read_message(base64.b64decode(case["message"]), case["dir"], case["ext"], case.get("mask", False),
                                   not case.get("summary"))
            except Refused as e:
                out = {"error": e.reason}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
