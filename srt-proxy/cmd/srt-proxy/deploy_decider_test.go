//go:build linux

package main

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The service with srt's reference decider (docs/examples/
// srt-proxy-decider.conf over srt-proxy.service, deciding with
// docs/examples/decider-settings.json), kept true as the decider.py
// service is: its ExecStart under systemd-socket-activate here, and the
// docs' steps under systemd itself in TestDeciderServiceUnderSystemd.

// deciderSettings is the example settings file with the test's upstream
// (127.0.0.1, any port) added to allowedDomains, written to a file of the
// test's.
func deciderSettings(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(examplesDir, "decider-settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	const list = `"allowedDomains": [`
	if !strings.Contains(string(b), list) {
		t.Fatalf("decider-settings.json has no %s", list)
	}
	f := filepath.Join(t.TempDir(), "settings.json")
	if err := os.WriteFile(f, []byte(strings.Replace(string(b), list, list+`"127.0.0.1", `, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// lineFrom waits for a line that starts with prefix; the decider's
// decisions and its "serving" line, and systemd-socket-activate's own
// lines, may come between.
func (p *proc) lineFrom(prefix string) string {
	p.t.Helper()
	for {
		l := p.line()
		if strings.HasPrefix(l, prefix) {
			return l
		}
		if !strings.HasPrefix(l, "decider: decision=") && l != "decider: serving srt-proxy srt_v1=true" && !strings.HasPrefix(l, "Communication attempt on fd 3") && !strings.HasPrefix(l, "Execing ") {
			p.t.Fatalf("stderr %q, want a line starting %q", l, prefix)
		}
	}
}

func TestDeciderServiceSocketActivated(t *testing.T) {
	host, _ := listenStream(t, "srt-proxy.socket")
	up := newUpstream(t, "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nhello\n")
	settings := deciderSettings(t)
	argv := unitCommand(t, []string{"srt-proxy.service", deciderDropIn}, deciderPaths, []string{binary, deciderBinary(t), settings})
	addr := net.JoinHostPort(host, strconv.Itoa(freePort(t)))
	p := activatedCommand(t, nil, addr, argv)
	p.addr = addr
	get := func(h string) string { return "GET http://" + h + "/x HTTP/1.1\r\nHost: " + h + "\r\n\r\n" }

	// The first connection starts both; the decider says so first.
	got := async(func() string { return p.roundTrip(get(up.addr)) })
	if l := p.lineFrom("decider: "); l != "decider: settings loaded file="+settings {
		t.Fatalf("stderr %q", l)
	}
	p.lineFrom("srt proxy: serving fd 3")
	if s := up.next(t); !strings.HasPrefix(s.head, "GET /x HTTP/1.1\r\n") {
		t.Errorf("upstream got %q", s.head)
	}
	if a := await(t, got); !strings.HasSuffix(a, "\r\n\r\nhello\n") {
		t.Errorf("GET: %q", a)
	}
	dpid := childPid(t, p.cmd.Process.Pid, "/decider")

	// The example's deny list, with its reason; a name on no list.
	const reason = "internal.example.org is not reachable from workloads; ask the platform team"
	if a, want := p.roundTrip(get("internal.example.org")), refusal(403, "Forbidden", "decider", reason, true); a != want {
		t.Errorf("GET internal.example.org: %q, want %q", a, want)
	}
	if a, want := p.roundTrip(get("example.net")), refusal(403, "Forbidden", "host_not_allowed", "Connection blocked by network allowlist", false); a != want {
		t.Errorf("GET example.net: %q, want %q", a, want)
	}

	// The file changes: the decider reads it again, and srt-proxy's gate
	// follows. (The lines of the two programs can come in either order.)
	b, _ := os.ReadFile(settings)
	tmp := settings + ".new"
	os.WriteFile(tmp, []byte(strings.Replace(string(b), `"127.0.0.1", `, "", 1)), 0o644)
	if err := os.Rename(tmp, settings); err != nil {
		t.Fatal(err)
	}
	if l := p.lineFrom("decider: settings"); l != "decider: settings reloaded file="+settings {
		t.Fatalf("stderr %q", l)
	}
	for i := 0; ; i++ {
		a := p.roundTrip(get(up.addr))
		if strings.Contains(a, "X-Deny-Reason: host_not_allowed\r\n") {
			break
		}
		if i == 40 {
			t.Fatalf("GET after the reload: %q", a)
		}
		// Between the decider's reload and its update reaching srt-proxy's
		// gate, the decider refuses (its reason); before the reload the
		// old lists let the request through to the upstream.
		if !strings.Contains(a, "X-Deny-Reason: decider\r\n") {
			up.next(t)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Stopped as systemctl stop does (KillMode=mixed): SIGTERM to
	// srt-proxy; the decider sees its stdin end.
	p.cmd.Process.Signal(syscall.SIGTERM)
	code, rest := p.exit()
	lines := map[string]bool{}
	for _, l := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(l, "decider: decision=") {
			lines[l] = true
		}
	}
	if code != 0 || len(lines) != 2 || !lines["srt proxy: stopped (SIGTERM)"] || !lines["decider: stopped (srt-proxy closed the stream)"] {
		t.Errorf("exit %d, stderr %q", code, rest)
	}
	gone(t, dpid, "the decider")
}

// The docs' steps for the reference decider, after the service's own, and
// systemd itself running the result (bootSystemd): the decider runs as the
// service's dynamic user with no privilege, as srt-proxy does; its
// decisions and reloads are in the journal; editing the settings file and
// systemctl reload (ExecReload: SIGHUP to the decider) both read it again
// while the service keeps running; systemctl stop ends it.
func TestDeciderServiceUnderSystemd(t *testing.T) {
	needTools(t, "curl", "install")
	var steps []string
	for _, b := range []struct{ marker, built, bin, pkg string }{
		{"<!-- tested: install -->", "/run/srt-test/srt-proxy", "/usr/local/bin/srt-proxy", "./srt-proxy/cmd/srt-proxy"},
		{"<!-- tested: install-decider -->", "/run/srt-test/decider", "/usr/local/bin/decider", "./decider/cmd/decider"},
	} {
		block := docBlock(t, b.marker)
		build := regexp.MustCompile(`^CGO_ENABLED=0 go build -tags=urfave_cli_no_docs( -trimpath)? -o ` + regexp.QuoteMeta(b.bin+" "+b.pkg) + `$`)
		built := false
		for i, l := range block {
			if build.MatchString(l) {
				block[i], built = "install -m 755 "+b.built+" "+b.bin, true
			}
		}
		if !built {
			t.Fatalf("the docs' steps after %s do not build %s as the test expects:\n%s", b.marker, b.bin, strings.Join(block, "\n"))
		}
		steps = append(steps, block...)
	}
	m := bootSystemd(t, map[string]string{"srt-proxy": binary, "decider": deciderBinary(t)})
	m.must("bash", "-euxc", "cd /run/srt-test/repo\n"+strings.Join(steps, "\n"))
	// The test's upstream, on the example's allow list.
	m.must("sed", "-i", `s/"allowedDomains": \[/"allowedDomains": ["127.0.0.1", /`, "/etc/srt-proxy/settings.json")
	if out, _ := m.in("systemctl", "is-active", "srt-proxy.socket", "srt-proxy.service"); out != "active\ninactive\n" {
		t.Fatalf("after the install steps: %q, want the socket active and the service not yet started", out)
	}
	up := upstreamOn(listenIn(t, "/proc/"+m.pid+"/ns/net", "127.0.0.1:0"), "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nhello\n")
	curl := func(args ...string) string {
		out, _ := m.in(append([]string{"curl", "-sS", "--max-time", "10", "-x", "http://127.0.0.1:3128"}, args...)...)
		return out
	}
	journal := func() string { return m.must("journalctl", "--no-pager", "-o", "cat", "-u", "srt-proxy.service") }
	// count is how many times the journal holds line.
	count := func(line string) (int, string) {
		j := journal()
		seen := 0
		for _, l := range strings.Split(j, "\n") {
			if l == line {
				seen++
			}
		}
		return seen, j
	}
	// waitJournal waits until the journal holds line n times.
	waitJournal := func(line string, n int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; {
			seen, j := count(line)
			if seen >= n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the journal does not hold %q %d times:\n%s", line, n, j)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	if got := curl("http://" + up.addr + "/x"); got != "hello\n" {
		t.Fatalf("GET: %q\n%s", got, journal())
	}
	up.next(t)
	const reason = "internal.example.org is not reachable from workloads; ask the platform team"
	if got := curl("-i", "http://internal.example.org/"); !strings.Contains(got, "X-Deny-Reason: decider\r\n") || !strings.HasSuffix(got, "\r\n\r\n"+reason+"\n") {
		t.Errorf("GET internal.example.org: %q", got)
	}
	if got := curl("-i", "http://example.net/"); !strings.Contains(got, "X-Deny-Reason: host_not_allowed\r\n") {
		t.Errorf("GET example.net: %q", got)
	}
	main := strings.TrimSpace(m.must("systemctl", "show", "-P", "MainPID", "srt-proxy.service"))
	kids := strings.Fields(m.must("cat", "/proc/"+main+"/task/"+main+"/children"))
	if len(kids) != 1 || !strings.Contains(m.must("cat", "/proc/"+kids[0]+"/cmdline"), "/usr/local/bin/decider") {
		t.Fatalf("srt-proxy's children: %q", kids)
	}
	for _, p := range []string{main, kids[0]} {
		s := map[string]string{}
		for _, l := range strings.Split(m.must("cat", "/proc/"+p+"/status"), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok {
				s[k] = strings.TrimSpace(v)
			}
		}
		if uid := strings.Fields(s["Uid"]); len(uid) == 0 || uid[0] == "0" || s["CapEff"] != "0000000000000000" || s["NoNewPrivs"] != "1" || s["Seccomp"] != "2" {
			t.Errorf("%s: Uid %s, CapEff %s, NoNewPrivs %s, Seccomp %s", s["Name"], s["Uid"], s["CapEff"], s["NoNewPrivs"], s["Seccomp"])
		}
	}
	waitJournal(`decider: decision=deny reason="`+reason+`" kind=http host=internal.example.org port=80 user= id=2 method=GET rule=internal.example.org`, 1)

	// Editing the file: the decider reads it again by itself, and
	// srt-proxy's gate follows.
	const reloaded = "decider: settings reloaded file=/etc/srt-proxy/settings.json"
	m.must("sed", "-i", `s/"127.0.0.1", //`, "/etc/srt-proxy/settings.json")
	waitJournal(reloaded, 1)
	for i := 0; ; i++ {
		got := curl("-i", "http://"+up.addr+"/y")
		if strings.Contains(got, "X-Deny-Reason: host_not_allowed\r\n") {
			break
		}
		if i == 40 {
			t.Fatalf("GET after the edit: %q", got)
		}
		up.next(t)
		time.Sleep(50 * time.Millisecond)
	}
	// systemctl reload: the decider reads it again (the same file: only
	// the signal can make it); the service runs on.
	if n, j := count(reloaded); n != 1 {
		t.Fatalf("%d reloads before systemctl reload:\n%s", n, j)
	}
	if out, err := m.in("systemctl", "reload", "srt-proxy.service"); err != nil {
		all, _ := m.in("journalctl", "--no-pager", "-o", "short-precise", "-n", "60")
		t.Fatalf("reload: %v %s\n%s", err, out, all)
	}
	waitJournal(reloaded, 2)
	if now := strings.TrimSpace(m.must("systemctl", "show", "-P", "MainPID", "srt-proxy.service")); now != main {
		t.Errorf("MainPID %s after the reload, was %s", now, main)
	}

	// (Once srt-proxy has ended, KillMode=mixed kills what is left: the
	// decider may be gone before it says it stops.)
	m.must("systemctl", "stop", "srt-proxy.service")
	j := journal()
	for _, want := range []string{"decider: settings loaded file=/etc/srt-proxy/settings.json", "srt proxy: serving fd 3", "srt proxy: stopped (SIGTERM)"} {
		if !strings.Contains("\n"+j, "\n"+want+"\n") {
			t.Errorf("the journal lacks %q:\n%s", want, j)
		}
	}
	if out, _ := m.in("systemctl", "is-failed", "srt-proxy.service", "srt-proxy.socket"); out != "inactive\nactive\n" {
		t.Errorf("after the stop: %q", out)
	}
}
