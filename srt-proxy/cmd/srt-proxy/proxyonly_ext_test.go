//go:build linux

package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/srt-sandbox/decider/protocol"
)

// Proxy-only mode with a decider that takes srt.v1 (offered in line
// framing): its reqs carry the kind and no user (there is no proxy
// authentication), deniedResolvedAddresses reach the address check, a
// refusal after an allow is reported (refused), and an update replaces the
// host gate's lists for the next request.
func TestProxyOnlySRTv1(t *testing.T) {
	const listed, added = "listed.test", "added.test"
	up := newUpstream(t, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n")
	_, port, _ := strings.Cut(up.addr, ":")
	hello := `{"t":"hello","proto":1,"allowedDomains":["127.0.0.1","` + listed + `"],"deniedDomains":[],"ext":["srt.v1"],"deniedResolvedAddresses":["198.51.100.0/24"]}`
	p := start(t, startOpts{hello: hello, hosts: "127.0.0.1 localhost " + added + "\n198.51.100.7 " + listed + "\n"})
	next := func() *protocol.Req {
		t.Helper()
		b := p.dec.next()
		m, err := protocol.DecodeProxyMessage(b, true)
		if err != nil {
			t.Fatalf("%q: %v", b, err)
		}
		r, ok := m.(*protocol.Req)
		if !ok {
			t.Fatalf("proxy sent %q, want a req", b)
		}
		return r
	}
	get := func(host string) string { return "GET http://" + host + "/ HTTP/1.1\r\nHost: " + host + "\r\n\r\n" }

	got := async(func() string { return p.roundTrip(get(up.addr)) })
	r := next()
	if r.Kind != protocol.KindHTTP || r.User != "" || r.Host != "127.0.0.1" {
		t.Errorf("req %+v, want kind http, no user", r)
	}
	p.dec.send(verdict(r.ID, `"action":"allow"`))
	up.next(t)
	if ans := await(t, got); !strings.HasSuffix(ans, "\r\n\r\nok\n") {
		t.Errorf("GET: %q", ans)
	}

	// deniedResolvedAddresses: the decider allows, the address check
	// refuses, and the decider hears why.
	got = async(func() string { return p.roundTrip(get(listed)) })
	r = next()
	p.dec.send(verdict(r.ID, `"action":"allow"`))
	if ans, want := await(t, got), refusal(403, "Forbidden", "address_not_allowed", "Connection to "+listed+" blocked: resolved to a listed address", false); ans != want {
		t.Errorf("got  %q\nwant %q", ans, want)
	}
	if b, want := string(p.dec.next()), `{"t":"refused","id":`+strconv.FormatUint(r.ID, 10)+`,"reason":"resolved to a listed address"}`; b != want {
		t.Errorf("the decider got %q, want %q", b, want)
	}

	// The gate before an update, then after it.
	gateRefusal := refusal(403, "Forbidden", "host_not_allowed", "Connection blocked by network allowlist", false)
	if ans := p.roundTrip(get(added + ":" + port)); ans != gateRefusal {
		t.Errorf("before the update: %q", ans)
	}
	// The link reads in order: once the verdict sent after the update
	// has answered a request, the update is in force.
	got = async(func() string { return p.roundTrip(get(up.addr)) })
	r = next()
	p.dec.send(`{"t":"update","allowedDomains":["`+added+`","127.0.0.1"],"deniedDomains":["127.0.0.2"]}`, verdict(r.ID, `"action":"allow"`))
	up.next(t)
	await(t, got)
	got = async(func() string { return p.roundTrip(get(added + ":" + port)) })
	if r = next(); r.Host != added {
		t.Fatalf("req %+v", r)
	}
	p.dec.send(verdict(r.ID, `"action":"allow"`))
	up.next(t)
	if ans := await(t, got); !strings.HasSuffix(ans, "\r\n\r\nok\n") {
		t.Errorf("GET %s after the update: %q", added, ans)
	}
	for _, h := range []string{listed, "127.0.0.2"} { // off the new allow list; on the new deny list
		if ans := p.roundTrip(get(h)); ans != gateRefusal {
			t.Errorf("GET %s after the update: %q", h, ans)
		}
	}
}
