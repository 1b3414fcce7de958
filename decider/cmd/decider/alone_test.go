package main

import (
	"fmt"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// started reads the decider's first lines, once srt-proxy said hello.
func (g *gate) started(file string) {
	g.t.Helper()
	g.decider.expect("decider: settings loaded file=" + file)
	g.decider.expect("decider: serving srt-proxy srt_v1=true")
}

// decision is the text line of one decision record.
func decision(decision, reason, host, port, id, method, rule string) string {
	if strings.ContainsAny(reason, " \"=") {
		reason = fmt.Sprintf("%q", reason)
	}
	return "decider: decision=" + decision + " reason=" + reason + " kind=http host=" + host + " port=" + port + " user= id=" + id + " method=" + method + " rule=" + rule
}

// The decider on its own behind a real srt-proxy, real curl as the client,
// loopback servers as the upstreams: the reference's domain rules (exact,
// port-scoped, wildcard, IPv6, localhost), the deny list before the allow
// list with its deniedDomainReasons reason reaching the client, srt-proxy's
// host gate refusing what no allowedDomains entry names, and one decision
// line per request the decider answers.
func TestDecisions(t *testing.T) {
	a := newUpstream(t, "tcp4", "127.0.0.1:0", "a")
	b := newUpstream(t, "tcp4", "127.0.0.1:0", "b")
	local := newUpstream(t, "tcp4", "127.0.0.1:0", "local")
	v6 := newUpstream(t, "tcp6", "[::1]:0", "v6")
	v6denied := newUpstream(t, "tcp6", "[::1]:0", "v6denied")
	f := writeSettings(t, `{"network": {
		"allowedDomains": ["127.0.0.1:`+a.port()+`", "[::1]", "LocalHost:`+local.port()+`", "*.wild.test"],
		"deniedDomains": ["bad.wild.test", "*.evil.wild.test", "[::1]:`+v6denied.port()+`"],
		"deniedDomainReasons": {"bad.wild.test": "blocked by policy P-7"}}}`)
	g := startGate(t, gateOpts{settings: f})
	g.started(f)

	hostNotAllowed := "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nX-Deny-Reason: host_not_allowed\r\nContent-Length: 40\r\n\r\nConnection blocked by network allowlist\n"
	deciderDenies := func(reason string) string {
		return fmt.Sprintf("HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nX-Deny-Reason: decider\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s\n", len(reason)+1, reason)
	}
	for _, c := range []struct {
		name string
		args []string
		want string // the body, or the whole answer (-i) of a refusal
		line string // the decider's line; "" when the decider is not asked
	}{
		{"allowed, its port", []string{"http://127.0.0.1:" + a.port() + "/x"}, "a\n",
			decision("allow", "host is on the allow list", "127.0.0.1", a.port(), "1", "GET", "127.0.0.1:"+a.port())},
		{"the same host, another port", []string{"-i", "http://127.0.0.1:" + b.port() + "/x"}, hostNotAllowed, ""},
		{"IPv6, any port", []string{"http://[::1]:" + v6.port() + "/"}, "v6\n",
			decision("allow", "host is on the allow list", "::1", v6.port(), "2", "GET", "[::1]")},
		{"IPv6, a denied port", []string{"-i", "http://[::1]:" + v6denied.port() + "/"}, hostNotAllowed, ""},
		{"localhost", []string{"http://localhost:" + local.port() + "/"}, "local\n",
			decision("allow", "host is on the allow list", "localhost", local.port(), "3", "GET", "LocalHost:"+local.port())},
		{"deny list with its reason", []string{"-i", "http://bad.wild.test/"}, deciderDenies("blocked by policy P-7"),
			decision("deny", "blocked by policy P-7", "bad.wild.test", "80", "4", "GET", "bad.wild.test")},
		{"deny list, wildcard", []string{"-i", "http://x.evil.wild.test/"}, deciderDenies("host is on the deny list"),
			decision("deny", "host is on the deny list", "x.evil.wild.test", "80", "5", "GET", "*.evil.wild.test")},
		{"a POST", []string{"-d", "data", "http://127.0.0.1:" + a.port() + "/y"}, "a\n",
			decision("allow", "host is on the allow list", "127.0.0.1", a.port(), "6", "POST", "127.0.0.1:"+a.port())},
		{"on no list", []string{"-i", "http://other.test/"}, hostNotAllowed, ""},
		{"the apex of a wildcard", []string{"-i", "http://wild.test/"}, hostNotAllowed, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, _ := g.curl(c.args...)
			if got != c.want {
				t.Errorf("curl %v:\n%q\nwant\n%q", c.args, got, c.want)
			}
			if c.line != "" {
				g.decider.expect(c.line)
			}
		})
	}
	if got, want := a.requests(), []string{"GET /x", "POST /y"}; !reflect.DeepEqual(got, want) {
		t.Errorf("upstream a had %q, want %q", got, want)
	}
	for _, u := range []*upstream{b, v6denied} {
		if got := u.requests(); got != nil {
			t.Errorf("upstream %s had %q", u.addr, got)
		}
	}
	// No line for what the decider was not asked about: the next is its
	// stop.
	g.proxy.cmd.Process.Signal(syscall.SIGTERM)
	g.decider.expect("decider: stopped (srt-proxy closed the stream)")
	if code := g.decider.exitCode(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// Names srt-proxy resolves (a private /etc/hosts): a wildcard entry, the
// address policy — deniedResolvedAddresses and a deny-listed IP literal,
// which srt-proxy's address check applies to the addresses a name resolves
// to — and the decider's line for srt-proxy's refusal after its allow.
func TestDecisionsByName(t *testing.T) {
	a := newUpstream(t, "tcp4", "127.0.0.1:0", "a")
	f := writeSettings(t, `{"network": {
		"allowedDomains": ["127.0.0.1:`+a.port()+`", "*.wild.test"],
		"deniedDomains": ["127.0.0.2"],
		"deniedResolvedAddresses": ["198.51.100.0/24"]}}`)
	g := startGate(t, gateOpts{settings: f, hosts: "127.0.0.1 localhost x.wild.test\n198.51.100.7 listed.wild.test\n127.0.0.2 ipdeny.wild.test\n"})
	g.started(f)
	refusedLine := func(reason, host, port, id string) string {
		return fmt.Sprintf("decider: refused by srt-proxy after the decider's allow decision=deny reason=%q kind=http host=%s port=%s user= id=%s method=GET rule=", reason, host, port, id)
	}
	addressRefusal := func(host, class string) string {
		body := "Connection to " + host + " blocked: resolved to " + class
		return fmt.Sprintf("HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nX-Deny-Reason: address_not_allowed\r\nContent-Length: %d\r\n\r\n%s\n", len(body)+1, body)
	}

	if got, _ := g.curl("http://x.wild.test:" + a.port() + "/w"); got != "a\n" {
		t.Errorf("a wildcard name: %q", got)
	}
	g.decider.expect(decision("allow", "host is on the allow list", "x.wild.test", a.port(), "1", "GET", "*.wild.test"))

	if got, want := g.curl1("-i", "http://listed.wild.test/"), addressRefusal("listed.wild.test", "a listed address"); got != want {
		t.Errorf("deniedResolvedAddresses: %q, want %q", got, want)
	}
	g.decider.expect(decision("allow", "host is on the allow list", "listed.wild.test", "80", "2", "GET", "*.wild.test"))
	g.decider.expect(refusedLine("resolved to a listed address", "listed.wild.test", "80", "2"))

	if got, want := g.curl1("-i", "http://ipdeny.wild.test:"+a.port()+"/"), addressRefusal("ipdeny.wild.test", "a deny-listed address"); got != want {
		t.Errorf("a deny-listed IP literal: %q, want %q", got, want)
	}
	g.decider.expect(decision("allow", "host is on the allow list", "ipdeny.wild.test", a.port(), "3", "GET", "*.wild.test"))
	g.decider.expect(refusedLine("resolved to a deny-listed address", "ipdeny.wild.test", a.port(), "3"))
	if got := a.requests(); !reflect.DeepEqual(got, []string{"GET /w"}) {
		t.Errorf("upstream a had %q", got)
	}
}

// curl1 is curl's output, whatever its exit code.
func (g *gate) curl1(args ...string) string {
	g.t.Helper()
	out, _ := g.curl(args...)
	return out
}

// nextEvent is the decider's next line that is not a decision record.
func (g *gate) nextEvent() string {
	g.t.Helper()
	for {
		if l := g.decider.line(); !strings.HasPrefix(l, "decider: decision=") {
			return l
		}
	}
}

// quiet says the decider wrote no line but decision records for d.
func (g *gate) quiet(d time.Duration) {
	g.t.Helper()
	end := time.After(d)
	for {
		select {
		case l := <-g.decider.lines:
			if !strings.HasPrefix(l, "decider: decision=") {
				g.t.Fatalf("the decider said %q", l)
			}
		case <-end:
			return
		}
	}
}

// reaches waits until curl through the gate gets want from u (or gives
// up): srt-proxy applies the decider's update when it reads it, which may
// come a moment after the decider has logged the reload.
func (g *gate) reaches(u *upstream, want bool) {
	g.t.Helper()
	for i := 0; ; i++ {
		out, _ := g.curl("-i", "http://"+u.addr+"/")
		got := strings.HasPrefix(out, "HTTP/1.1 200 ")
		if got == want {
			if got {
				u.requests()
			}
			return
		}
		if i == 40 {
			g.t.Fatalf("%s: want reached %v, got %q", u.addr, want, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Reloading: SIGHUP reads the file again (a change the directory watch
// cannot see, made through a hard link in another directory, is applied
// only then); a file replaced by a rename, or written in place, is read
// again without a signal; a file that cannot be used keeps the settings in
// force, and the decider says why; a directory change that leaves the file
// as it was is no reload. Each reload reaches srt-proxy's host gate.
func TestReload(t *testing.T) {
	a := newUpstream(t, "tcp4", "127.0.0.1:0", "a")
	b := newUpstream(t, "tcp4", "127.0.0.1:0", "b")
	doc := func(allowed ...string) string {
		return `{"network": {"allowedDomains": ["` + strings.Join(allowed, `", "`) + `"], "deniedDomains": []}}`
	}
	onlyA, onlyB, both := doc("127.0.0.1:"+a.port()), doc("127.0.0.1:"+b.port()), doc("127.0.0.1:"+a.port(), "127.0.0.1:"+b.port())
	f := writeSettings(t, onlyA)
	g := startGate(t, gateOpts{settings: f})
	g.started(f)
	g.reaches(a, true)
	g.reaches(b, false)
	reloaded := "decider: settings reloaded file=" + f

	// SIGHUP.
	{
		link := t.TempDir() + "/link.json"
		if err := syscall.Link(f, link); err != nil {
			t.Fatal(err)
		}
		writeInPlace(t, link, both)
		g.quiet(700 * time.Millisecond)
		g.reaches(b, false)
		g.decider.cmd.Process.Signal(syscall.SIGHUP)
		if l := g.nextEvent(); l != reloaded {
			t.Fatalf("after SIGHUP: %q", l)
		}
		g.reaches(b, true)
	}
	// replaced.
	{
		replaceFile(t, f, onlyB)
		if l := g.nextEvent(); l != reloaded {
			t.Fatalf("after the rename: %q", l)
		}
		g.reaches(a, false)
		g.reaches(b, true)
	}
	// invalid keeps the settings in force.
	{
		writeInPlace(t, f, `{"network": {"allowedDomains": [7], "deniedDomains": []}}`)
		want := "decider: " + f + " does not hold a valid config — network.allowedDomains.0: Expected string, received number; keeping the settings in force"
		if l := g.nextEvent(); l != want {
			t.Fatalf("after an invalid file:\n%q\nwant\n%q", l, want)
		}
		g.reaches(b, true)
		g.reaches(a, false)
		// SIGHUP reads it again, and says so again.
		g.decider.cmd.Process.Signal(syscall.SIGHUP)
		if l := g.nextEvent(); l != want {
			t.Fatalf("SIGHUP with the invalid file: %q", l)
		}
		replaceFile(t, f, `{"network": {"allowedDomains": [], "deniedDomains": [], "tlsTerminate": {}}}`)
		want = "decider: " + f + " does not hold a valid config — network.tlsTerminate: is not a setting of the decider: srt-proxy run alone terminates TLS with the CA it reads from its option --ca-fd; remove it from the decider's settings; keeping the settings in force"
		if l := g.nextEvent(); l != want {
			t.Fatalf("after srt's key:\n%q\nwant\n%q", l, want)
		}
		g.reaches(b, true)
	}
	// removed keeps the settings in force.
	{
		if err := syscall.Unlink(f); err != nil {
			t.Fatal(err)
		}
		if l, want := g.nextEvent(), "decider: "+f+" does not exist; keeping the settings in force"; l != want {
			t.Fatalf("after removing the file: %q, want %q", l, want)
		}
		g.reaches(b, true)
		writeInPlace(t, f, both)
		if l := g.nextEvent(); l != reloaded {
			t.Fatalf("after writing it again: %q", l)
		}
		g.reaches(a, true)
		g.reaches(b, true)
	}
	// unchanged is no reload.
	{
		now := time.Now()
		if err := syscall.UtimesNano(f, []syscall.Timespec{syscall.NsecToTimespec(now.UnixNano()), syscall.NsecToTimespec(now.UnixNano())}); err != nil {
			t.Fatal(err)
		}
		replaceFile(t, f, both)
		g.quiet(700 * time.Millisecond)
	}
}

// writeInPlace truncates path and writes doc into it.
func writeInPlace(t *testing.T, path, doc string) {
	t.Helper()
	fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_TRUNC|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if _, err := syscall.Write(fd, []byte(doc)); err != nil {
		t.Fatal(err)
	}
}

// The decider stops when srt-proxy does (the end of the stream) and on
// SIGTERM, and srt-proxy then stops too.
func TestStops(t *testing.T) {
	f := writeSettings(t, `{"network": {"allowedDomains": [], "deniedDomains": []}}`)
	t.Run("SIGTERM", func(t *testing.T) {
		g := startGate(t, gateOpts{settings: f})
		g.started(f)
		g.decider.cmd.Process.Signal(syscall.SIGTERM)
		g.decider.expect("decider: stopped (SIGTERM)")
		if code := g.decider.exitCode(); code != 0 {
			t.Errorf("exit %d", code)
		}
		g.proxy.expect("srt proxy: stopped (decider: decider closed the stream)")
	})
	t.Run("srt-proxy ends", func(t *testing.T) {
		g := startGate(t, gateOpts{settings: f})
		g.started(f)
		g.proxy.cmd.Process.Kill()
		g.decider.expect("decider: stopped (srt-proxy closed the stream)")
		if code := g.decider.exitCode(); code != 0 {
			t.Errorf("exit %d", code)
		}
	})
}
