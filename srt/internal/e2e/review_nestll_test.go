//go:build linux

package e2e

// Hostile review of an srt inside an srt sandbox of the Landlock backend
// (docs/security.md, "An srt inside an srt sandbox of the Landlock
// backend"): the outer command attacking the offer socket and the outer
// srt, the inner command attacking the inner and outer rules, lease
// races, and forged SRT_LANDLOCK_LISTENERS values. Each test forces the
// Landlock backend (landlockArgs), runs as root and srt-test (forEach),
// and uses only the loopback.

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// nestSettings are an outer and an inner settings file: the outer allows
// both upstreams, the inner only allowed.
func nestSettings(w *workspace, allowed, innerDenies string) (outer, inner string) {
	w.mkdir("home/proj/inner")
	outer = w.settings(`{"network":{"allowedDomains":["` + allowed + `","` + innerDenies + `"],"deniedDomains":[]},` +
		`"filesystem":{"allowWrite":["."],"denyWrite":[],"denyRead":[]}}`)
	inner = w.write("inner.json", `{"network":{"allowedDomains":["`+allowed+`"],"deniedDomains":[]},`+
		`"filesystem":{"allowWrite":["`+w.path("home/proj/inner")+`"],"denyWrite":[],"denyRead":[]}}`)
	return outer, inner
}

// nestEach runs f for each runner with two upstreams (up allowed by
// both settings, other by the outer only) and the settings files.
func nestEach(t *testing.T, f func(t *testing.T, w *workspace, up, other *upstream, outer, inner string)) {
	up, other := startUpstream(t), startUpstream(t)
	forEach(t, func(t *testing.T, w *workspace) {
		outer, inner := nestSettings(w, up.addr(), other.addr())
		f(t, w, up, other, outer, inner)
	})
}

// innerSrt is the srt command line an outer command runs.
func innerSrt(w *workspace) string {
	s := filepath.Join(bin, "srt")
	if w.r.uid == 0 {
		s += " --allow-weaker=root"
	}
	return s
}

// procStatus is a field of /proc/<pid>/status (as a number, kB for sizes).
func procStatus(pid int, field string) int {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, _ := strconv.Atoi(strings.Fields(v)[0])
			return n
		}
	}
	return -1
}

func fdCount(pid int) int {
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// TestReviewNestllLeaseFlood: the outer command (no srt inside) floods the
// offer socket: many leases (unconnected Unix sockets, each ended at
// once, so that the outer srt offers the listeners again each time, into
// a queue nobody reads), messages with many descriptors, pipes as leases,
// huge messages. The outer srt must neither keep descriptors nor grow
// without bound, must end with its command, and an srt inside run after
// the flood must still get the listeners.
func TestReviewNestllLeaseFlood(t *testing.T) {
	nestEach(t, func(t *testing.T, w *workspace, up, other *upstream, outer, inner string) {
		flood := w.write("flood.py", `import os, socket, sys, time
ch = socket.socket(fileno=int(os.environ["SRT_LANDLOCK_LISTENERS"]))
open("ready", "w").close()
for i in range(300):
    if os.path.exists("go"): break
    time.sleep(0.1)
n = int(sys.argv[1])
for i in range(n):
    s, peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    peer.close()
    socket.send_fds(ch, [b"srt-landlock-listeners lease"], [s.fileno()])
    s.close()
r, wr = os.pipe()
for i in range(200):
    socket.send_fds(ch, [b"srt-landlock-listeners lease"], [r])
    socket.send_fds(ch, [b"x" * 60000], [r] * 250)
os.close(r); os.close(wr)
open("flooded", "w").close()
for i in range(300):
    if os.path.exists("checked"): break
    time.sleep(0.1)
`)
		cmd := w.command(nil, append(landlockArgs(w), "-s", outer, "-c", strings.Join([]string{
			`python3 ` + flood + ` 20000; echo "FLOOD-EXIT $?"`,
			innerSrt(w) + ` -s ` + inner + ` -c 'curl -s -o /dev/null -w "AFTER-FLOOD %{http_code}\n" --noproxy "" http://` + up.addr() + `/' 2>&1 | grep -v 'srt: warning'`,
		}, "\n"))...)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		pid := cmd.Process.Pid
		waitFile := func(name string) bool {
			for i := 0; i < 600; i++ {
				if exists(w.path("home/proj/" + name)) {
					return true
				}
				select {
				case <-done:
					return false
				case <-time.After(100 * time.Millisecond):
				}
			}
			return false
		}
		if !waitFile("ready") {
			cmd.Process.Kill()
			<-done
			t.Fatalf("the flood did not start:\n%s%s", out.String(), errb.String())
		}
		rss0, fd0 := procStatus(pid, "VmRSS"), fdCount(pid)
		w.write("home/proj/go", "")
		if !waitFile("flooded") {
			cmd.Process.Kill()
			<-done
			t.Fatalf("the flood did not end:\n%s%s", out.String(), errb.String())
		}
		time.Sleep(time.Second)
		rss1, fd1 := procStatus(pid, "VmRSS"), fdCount(pid)
		w.write("home/proj/checked", "")
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Fatalf("the outer srt did not end in 60 s after its command's flood\n%s%s", out.String(), errb.String())
		}
		t.Logf("outer srt: VmRSS %d kB -> %d kB, descriptors %d -> %d", rss0, rss1, fd0, fd1)
		if fd1 > fd0+8 {
			t.Errorf("LEAK: the outer srt holds %d descriptors more after its command's flood of the offer socket", fd1-fd0)
		}
		if rss1 > rss0+30*1024 {
			t.Errorf("GROWTH: the outer srt grew by %d kB (VmRSS) from its command's flood of leases on the offer socket", rss1-rss0)
		}
		r := result{stdout: out.String(), stderr: errb.String(), code: cmd.ProcessState.ExitCode()}
		expect(t, r, 0, "FLOOD-EXIT 0", "AFTER-FLOOD 200")
	})
}

// TestReviewNestllEmptyMessage: an empty message from the outer command on
// the offer socket is no end of the socket: srt runs one after another
// inside still each get the listeners.
func TestReviewNestllEmptyMessage(t *testing.T) {
	nestEach(t, func(t *testing.T, w *workspace, up, other *upstream, outer, inner string) {
		srt := innerSrt(w)
		r := w.srt(append(landlockArgs(w), "-s", outer, "-c", strings.Join([]string{
			`python3 -c 'import os, socket; socket.socket(fileno=int(os.environ["SRT_LANDLOCK_LISTENERS"])).send(b"")'`,
			srt + ` -s ` + inner + ` -c 'echo FIRST-RAN' 2>&1 | grep -v 'srt: warning'`,
			srt + ` -s ` + inner + ` -c 'echo SECOND-RAN' 2>&1 | grep -v 'srt: warning'`,
		}, "\n"))...)
		expect(t, r, 0, "FIRST-RAN", "SECOND-RAN")
	})
}

// TestReviewNestllOwnEndAsLease: the outer command sends its own end of the
// offer socket as a lease. The outer srt must not take its own queued offer
// away from the command, and must end with its command.
func TestReviewNestllOwnEndAsLease(t *testing.T) {
	nestEach(t, func(t *testing.T, w *workspace, up, other *upstream, outer, inner string) {
		r := w.srt(append(landlockArgs(w), "-s", outer, "-c", strings.Join([]string{
			`python3 -c 'import os, socket; fd=int(os.environ["SRT_LANDLOCK_LISTENERS"]); socket.send_fds(socket.socket(fileno=os.dup(fd)), [b"srt-landlock-listeners lease"], [fd])'`,
			`sleep 0.5`,
			innerSrt(w) + ` -s ` + inner + ` -c 'echo INNER-RAN' 2>&1 | grep -v 'srt: warning'`,
		}, "\n"))...)
		expect(t, r, 0, "INNER-RAN")
	})
}

// TestReviewNestllInnerSeesNothingOfOuter: the inner command finds no
// credential of the outer srt (its proxy token) in its environment or in
// any process's command line, holds no descriptor of the outer's (no
// listening socket, no offer socket), and cannot reach the outer proxy.
func TestReviewNestllInnerSeesNothingOfOuter(t *testing.T) {
	nestEach(t, func(t *testing.T, w *workspace, up, other *upstream, outer, inner string) {
		probe := w.write("probe.py", `import os, socket
tok = open("outer-token").read().strip()
assert len(tok) >= 16, tok
for k, v in os.environ.items():
    if tok in v: print("ENV-LEAK", k)
for p in os.listdir("/proc"):
    if not p.isdigit(): continue
    for f in ("cmdline", "environ"):
        try:
            if tok.encode() in open("/proc/%s/%s" % (p, f), "rb").read(): print("PROC-LEAK", f, open("/proc/%s/comm" % p).read().strip())
        except OSError: pass
for fd in sorted(int(f) for f in os.listdir("/proc/self/fd")):
    try:
        s = socket.socket(fileno=os.dup(fd))
    except OSError:
        continue
    try:
        lis = s.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
    except OSError:
        lis = 0
    print("FD", fd, s.family.name, s.type.name, "LISTENING" if lis else "")
print("PROBE-DONE")
`)
		r := w.srt(append(landlockArgs(w), "-s", outer, "-c", strings.Join([]string{
			`echo "$HTTP_PROXY" | sed 's,^http://[^:]*:,,; s,@.*,,' > outer-token`,
			innerSrt(w) + ` -s ` + inner + ` -c 'python3 ` + probe + `; curl -s -o /dev/null -w "INNER-UP %{http_code}\n" --noproxy "" http://` + up.addr() + `/' 2>&1 | grep -v 'srt: warning'`,
		}, "\n"))...)
		expect(t, r, 0, "PROBE-DONE", "INNER-UP 200", "!ENV-LEAK", "!PROC-LEAK", "!LISTENING", "!SOCK_SEQPACKET")
	})
}

// TestReviewNestllKilledInnerLeavesNothing: an srt inside killed (SIGKILL)
// while its command runs and its proxy serves: its command ends, its
// helpers end, and the next srt inside serves every request of its
// command itself (none is answered by a proxy left over, with the killed
// srt's credentials: 407).
func TestReviewNestllKilledInnerLeavesNothing(t *testing.T) {
	nestEach(t, func(t *testing.T, w *workspace, up, other *upstream, outer, inner string) {
		srt := innerSrt(w)
		kids := w.write("kids.sh", `for s in /proc/[0-9]*/status; do pp=$(awk '/^PPid:/{print $2}' $s 2>/dev/null); [ "$pp" = "$1" ] && { d=${s%/status}; echo "${d#/proc/} $(cat $d/comm)"; }; done; true`+"\n")
		r := w.srt(append(landlockArgs(w), "-s", outer, "-c", strings.Join([]string{
			srt + ` -s ` + inner + ` -c 'curl -s -o /dev/null --noproxy "" http://` + up.addr() + `/; touch inner/started; while :; do date +%s%N > inner/alive; sleep 0.1; done' 2>/dev/null & p=$!`,
			`for i in $(seq 200); do [ -e inner/started ] && break; sleep 0.1; done`,
			`sh ` + kids + ` $p > kids.txt; sed 's/^/CHILD /' kids.txt`,
			`kill -9 $p; wait $p; sleep 1`,
			`a1=$(cat inner/alive); sleep 1; a2=$(cat inner/alive); [ "$a1" = "$a2" ] && echo KILLED-COMMAND-STOPPED || echo KILLED-COMMAND-STILL-RUNNING`,
			`while read pid comm; do [ -e /proc/$pid ] && [ "$(cat /proc/$pid/comm 2>/dev/null)" = "$comm" ] && echo "LEFT-OVER $comm"; done < kids.txt`,
			srt + ` -s ` + inner + ` -c 'for i in $(seq 20); do curl -s -o /dev/null -w "%{http_code}\n" --noproxy "" http://` + up.addr() + `/; done' 2>/dev/null | sort | uniq -c | sed 's/^ */NEXT-CODES /'`,
		}, "\n"))...)
		expect(t, r, 0, "KILLED-COMMAND-STOPPED", "NEXT-CODES 20 200", "!LEFT-OVER", "!KILLED-COMMAND-STILL-RUNNING")
	})
}

// TestReviewNestllTwoAtOnce: while one srt inside holds the listeners, a
// second refuses (exit 1, its command not run) with a line that says what
// to do; the first is unaffected.
func TestReviewNestllTwoAtOnce(t *testing.T) {
	nestEach(t, func(t *testing.T, w *workspace, up, other *upstream, outer, inner string) {
		srt := innerSrt(w)
		r := w.srt(append(landlockArgs(w), "-s", outer, "-c", strings.Join([]string{
			srt + ` -s ` + inner + ` -c 'touch inner/s1; sleep 3; curl -s -o /dev/null -w "FIRST %{http_code}\n" --noproxy "" http://` + up.addr() + `/' 2>/dev/null & p=$!`,
			`for i in $(seq 200); do [ -e inner/s1 ] && break; sleep 0.1; done`,
			srt + ` -s ` + inner + ` -c 'echo TWO-RAN' 2>two.err; echo "TWO-EXIT $?"; grep -v 'srt: warning' two.err | sed 's/^/T: /'`,
			`wait $p`,
		}, "\n"))...)
		expect(t, r, 0, "FIRST 200", "!TWO-RAN", "T: srt: srt cannot listen for its network proxies here", "another srt in this sandbox holds them", "wait for it to end and run this srt again, or run the outer srt under the bubblewrap backend", "TWO-EXIT 1")
	})
}

// TestReviewNestllForgedListenersVar: SRT_LANDLOCK_LISTENERS set by the
// outer command to what it chose: a non-number, a pipe, a socket pair of
// its own (empty, or carrying something else than listeners). Each
// refuses (exit 1, nothing run) naming the variable; and one carrying the
// real spares (taken by the outer command, which keeps copies) runs the
// inner command under the inner rules still.
func TestReviewNestllForgedListenersVar(t *testing.T) {
	nestEach(t, func(t *testing.T, w *workspace, up, other *upstream, outer, inner string) {
		srt := innerSrt(w)
		forge := w.write("forge.py", `import os, socket, subprocess, sys
mode = sys.argv[1]
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
if mode == "other":
    r, wr = os.pipe()
    socket.send_fds(a, [b"srt-landlock-listeners 1"], [r, wr])
elif mode == "spares":
    ch = socket.socket(fileno=int(os.environ["SRT_LANDLOCK_LISTENERS"]))
    msg, fds, flags, addr = socket.recv_fds(ch, 64, 16, socket.MSG_DONTWAIT)
    socket.send_fds(a, [msg], fds)
env = dict(os.environ, SRT_LANDLOCK_LISTENERS=str(b.fileno()))
rc = subprocess.call(sys.argv[2:], env=env, pass_fds=[b.fileno()])
print("FORGED-" + mode + "-EXIT", rc)
`)
		inCmd := ` -s ` + inner + ` -c 'echo RAN-$0; curl -s -o /dev/null -w "UP %{http_code}\n" --noproxy "" http://` + up.addr() + `/; curl -s -o /dev/null -w "DENIED %{http_code}\n" --noproxy "" http://` + other.addr() + `/'`
		r := w.srt(append(landlockArgs(w), "-s", outer, "-c", strings.Join([]string{
			`SRT_LANDLOCK_LISTENERS=abc ` + srt + ` -s ` + inner + ` -c 'echo RAN-abc'; echo "ABC-EXIT $?"`,
			`exec 7</dev/null; SRT_LANDLOCK_LISTENERS=7 ` + srt + ` -s ` + inner + ` -c 'echo RAN-devnull'; echo "DEVNULL-EXIT $?"`,
			`python3 ` + forge + ` empty ` + srt + ` -s ` + inner + ` -c 'echo RAN-empty'`,
			`python3 ` + forge + ` other ` + srt + ` -s ` + inner + ` -c 'echo RAN-other'`,
			`python3 ` + forge + ` spares ` + srt + inCmd,
		}, "\n"))...)
		expect(t, r, 0, "ABC-EXIT 1", "DEVNULL-EXIT 1", "FORGED-empty-EXIT 1", "FORGED-other-EXIT 1", "FORGED-spares-EXIT 0",
			`SRT_LANDLOCK_LISTENERS="abc" names no offer of an outer srt`, `SRT_LANDLOCK_LISTENERS="7" names no offer`,
			"!RAN-abc", "!RAN-devnull", "!RAN-empty", "!RAN-other", "UP 200", "DENIED 403")
		t.Logf("refusals:\n%s", r.stderr)
	})
}

// TestReviewNestllNoProxyDirect: the inner srt takes the outer command's
// NO_PROXY (localhost, 127.0.0.1, the private ranges) as its parent
// proxy's: its srt-proxy connects to those directly, from the outer
// domain, past the outer srt's decider. A name the outer rules do not
// allow (localhost:<port>, where the outer allows 127.0.0.1:<port>) and
// the inner rules do must be refused by the outer, as every other name
// the outer does not allow is (403, the outer's violation).
// Fixed: inside another srt's Landlock sandbox srt's proxy sends every
// destination through the outer's (srt-proxy --parent-all).
func TestReviewNestllNoProxyDirect(t *testing.T) {
	nestEach(t, func(t *testing.T, w *workspace, up, other *upstream, outer, inner string) {
		port := strings.TrimPrefix(up.addr(), "127.0.0.1:")
		inner = w.write("inner-local.json", `{"network":{"allowedDomains":["localhost:`+port+`","10.255.255.1:`+port+`"],"deniedDomains":[]},`+
			`"filesystem":{"allowWrite":["`+w.path("home/proj/inner")+`"],"denyWrite":[],"denyRead":[]}}`)
		r := w.srt(append(landlockArgs(w), "--show-violations", "-s", outer, "-c", strings.Join([]string{
			`curl -s -o /dev/null -w "OUTER-CMD-LOCALHOST %{http_code}\n" --noproxy "" http://localhost:` + port + `/`,
			innerSrt(w) + ` -s ` + inner + ` -c 'curl -s -o /dev/null -w "INNER-LOCALHOST %{http_code}\n" --noproxy "" http://localhost:` + port + `/; curl -m 5 -s -o /dev/null -w "INNER-PRIVATE %{http_code}\n" --noproxy "" http://10.255.255.1:` + port + `/' 2>&1 | grep -v 'srt: warning'`,
		}, "\n"))...)
		t.Logf("%s", withoutAnnouncement(r.stdout+r.stderr))
		expect(t, r, 0, "OUTER-CMD-LOCALHOST 403", "INNER-LOCALHOST 403", "INNER-PRIVATE 403")
	})
}

// TestReviewNestllBackToBack: srt inside run one right after another, each
// sending requests at once: every request is served by the srt whose
// command sent it (none by the proxy of the srt before, still accepting
// on the same listeners: that one would answer 407).
func TestReviewNestllBackToBack(t *testing.T) {
	nestEach(t, func(t *testing.T, w *workspace, up, other *upstream, outer, inner string) {
		r := w.srt(append(landlockArgs(w), "-s", outer, "-c",
			`for i in 1 2 3 4 5 6; do `+innerSrt(w)+` -s `+inner+` -c 'for j in 1 2 3 4 5; do curl -s -o /dev/null -w "%{http_code}\n" --noproxy "" http://`+up.addr()+`/; done' 2>/dev/null; done | sort | uniq -c | sed 's/^ */CODES /'`)...)
		expect(t, r, 0, "CODES 30 200")
	})
}

// TestReviewNestllOuterKilled: the outer srt killed (SIGKILL) while an srt
// inside runs its command and serves its requests: the outer command, the
// inner srt, its command and its helpers all end (nothing runs on
// unwatched, holding the listeners).
func TestReviewNestllOuterKilled(t *testing.T) {
	nestEach(t, func(t *testing.T, w *workspace, up, other *upstream, outer, inner string) {
		cmd := w.command(nil, append(landlockArgs(w), "-s", outer, "-c", strings.Join([]string{
			innerSrt(w) + ` -s ` + inner + ` -c 'while :; do curl -s -o /dev/null --noproxy "" http://` + up.addr() + `/; date +%s%N > inner/alive; sleep 0.1; done' 2>/dev/null`,
		}, "\n"))...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		for i := 0; i < 200 && !exists(w.path("home/proj/inner/alive")); i++ {
			time.Sleep(100 * time.Millisecond)
		}
		if !exists(w.path("home/proj/inner/alive")) {
			cmd.Process.Kill()
			<-done
			t.Fatal("the inner command did not start")
		}
		// Every process of the run: the outer srt's descendants.
		tree := func() []int {
			var out []int
			want := map[int]bool{cmd.Process.Pid: true}
			for round := 0; round < 8; round++ {
				ents, _ := os.ReadDir("/proc")
				for _, e := range ents {
					pid, err := strconv.Atoi(e.Name())
					if err != nil || want[pid] {
						continue
					}
					if want[procStatus(pid, "PPid")] {
						want[pid] = true
						out = append(out, pid)
					}
				}
			}
			return out
		}
		before := tree()
		cmd.Process.Kill()
		<-done
		time.Sleep(2 * time.Second)
		var left []string
		for _, pid := range before {
			if data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); err == nil {
				st, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
				if !strings.Contains(string(st), ") Z ") {
					left = append(left, strconv.Itoa(pid)+" "+strings.TrimSpace(string(data)))
				}
			}
		}
		a1, _ := os.ReadFile(w.path("home/proj/inner/alive"))
		time.Sleep(time.Second)
		a2, _ := os.ReadFile(w.path("home/proj/inner/alive"))
		t.Logf("processes of the run before the kill: %d; left after: %v", len(before), left)
		if len(left) > 0 || string(a1) != string(a2) {
			t.Errorf("UNWATCHED: after the outer srt was killed, processes of its sandbox still run: %v (inner command heartbeat moving: %v)", left, string(a1) != string(a2))
		}
	})
}
