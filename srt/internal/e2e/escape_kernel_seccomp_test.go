//go:build linux

package e2e

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The seccomp rules for what uid 0 (and any uid) inside reaches that no
// mount can hide: the kernel's keyrings, set-id files, and host datagram
// sockets reached by path.

// runAsRunner runs a host program as the workspace's user and returns its
// trimmed stdout; it fails the test when the program fails.
func (w *workspace) runAsRunner(stdin string, name string, args ...string) string {
	w.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = w.dir, w.env()
	cmd.Stdin = strings.NewReader(stdin)
	w.asRunner(cmd)
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		w.t.Fatalf("%s %v: %v\n%s", name, args, err, msg)
	}
	return strings.TrimSpace(string(out))
}

// userKey adds a key with the secret to the runner's user keyring (@u),
// outside the sandbox, and removes it when the test ends. It returns the
// key's serial and description.
func (w *workspace) userKey(secret string) (serial, desc string) {
	w.t.Helper()
	desc = "srt-escape-" + strings.ReplaceAll(w.t.Name(), "/", "-")
	serial = w.runAsRunner(secret, "keyctl", "padd", "user", desc, "@u")
	w.t.Cleanup(func() {
		cmd := exec.Command("keyctl", "unlink", serial, "@u")
		w.asRunner(cmd)
		cmd.Run()
	})
	return serial, desc
}

// TestEscapeUserKeyring: the caller's user keyring (@u) is found by uid,
// not inherited, so the new session keyring did not hide it: the command
// linked it into its own keyring and read every key (finding 2). keyctl,
// add_key and request_key now fail with EPERM inside, for the probe's raw
// calls and for the real keyctl program, and /proc/keys is masked.
func TestEscapeUserKeyring(t *testing.T) {
	skipOnLandlock(t)
	if _, err := exec.LookPath("keyctl"); err != nil {
		t.Skip("keyctl (keyutils) is not installed")
	}
	forEach(t, func(t *testing.T, w *workspace) {
		const secret = "USER-KEYRING-SECRET-7f3a"
		serial, desc := w.userKey(secret)
		s := fsSettings(writeCwd)
		p := w.probe(s, "keyring-user", serial)
		want(t, p, "user-keyring", "EPERM", "link-user", "EPERM", "describe", "EPERM", "read-serial", "EPERM",
			"add-key", "EPERM", "request-key", "EPERM")
		expect(t, p.result, 0, "!"+secret)

		// The real tool, as the finding used it.
		r := w.sh(s, "keyctl show @u; keyctl link @u @s; keyctl print "+serial+"; keyctl search @u user "+desc+"; echo done")
		expect(t, r, 0, "done", "!"+secret, "!"+desc, "Operation not permitted")
		want(t, w.probe(s, "read", "/proc/keys"), "read", "EACCES")

		// Control: outside the sandbox the same probe links @u into its own
		// process keyring and reads the key; the real keyctl does the same
		// in a session keyring of its own; /proc/keys lists the key.
		c := w.hostProbe("keyring-user", serial)
		want(t, c, "user-keyring", "ok", "link-user", "ok", "read-serial", "ok")
		expect(t, c.result, 0, "DATA "+secret)
		out := w.runAsRunner("", "keyctl", "session", "-", "sh", "-c", "keyctl link @u @s && keyctl print "+serial)
		if !strings.Contains(out, secret) {
			t.Fatalf("control: keyctl outside the sandbox did not print the key: %q", out)
		}
		expect(t, w.hostProbe("read", "/proc/keys").result, 0, desc)
	})
}

// TestEscapeUnixDatagram: socket(AF_UNIX) is refused, but a datagram socket
// from socketpair(2) sent to any host socket by path with sendto(2)
// (syslog, journald, notify sockets; finding 5). socketpair(AF_UNIX) of
// any type but SOCK_STREAM and SOCK_SEQPACKET now fails with EPERM; the
// two allowed types ignore a destination (EISCONN for stream; seqpacket
// sends to its peer), which the probe shows on this kernel.
func TestEscapeUnixDatagram(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		got := listenUnixgram(t, w.path("home/host-dgram.sock"))
		s := fsSettings(writeCwd)
		p := w.probe(s, "dgram-send", w.path("home/host-dgram.sock"))
		want(t, p, "socketpair-dgram", "EPERM", "socketpair-raw", "EPERM",
			"socketpair-seqpacket", "ok", "sendto-seqpacket", "ok", "peer-seqpacket", "got",
			"socketpair-stream", "ok", "sendto-stream", "EISCONN")
		if msgs := got(); len(msgs) > 0 {
			t.Fatalf("ESCAPE: the host socket received %q from the sandbox\n%s", msgs, p.result)
		}

		// Control: network.allowAllUnixSockets lifts the rule, and the
		// same probe's datagram reaches the host socket.
		open := `{"network":{"allowedDomains":[],"deniedDomains":[],"allowAllUnixSockets":true},"filesystem":` + writeCwd + `}`
		c := w.probe(open, "dgram-send", w.path("home/host-dgram.sock"))
		want(t, c, "socketpair-dgram", "ok", "sendto-dgram", "ok")
		waitFor(t, func() bool { return strings.Contains(strings.Join(got(), ","), "srt-probe-dgram") }, "the control's datagram at the host socket")
		if msgs := strings.Join(got(), ","); strings.Contains(msgs, "seqpacket") || strings.Contains(msgs, "stream") {
			t.Fatalf("a stream or seqpacket pair's message reached the host socket: %s", msgs)
		}
	})
}

// listenUnixgram binds a datagram socket at path (mode 0777, so that any
// uid may send) in the test process, and returns a function that lists
// what it received so far.
func listenUnixgram(t *testing.T, path string) func() []string {
	t.Helper()
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	os.Chmod(path, 0o777)
	msgs := make(chan string, 16)
	go func() {
		buf := make([]byte, 512)
		for {
			n, _, err := c.ReadFrom(buf)
			if err != nil {
				return
			}
			msgs <- string(buf[:n])
		}
	}()
	var seen []string
	return func() []string {
		// What the sandbox sent is queued on the socket by the time the
		// probe's sendto returned; give the reader a moment to take it.
		deadline := time.After(100 * time.Millisecond)
		for {
			select {
			case m := <-msgs:
				seen = append(seen, m)
			case <-deadline:
				return seen
			}
		}
	}
}

// TestSocketpairStreamWorks: what Node's child_process, libuv and Python
// build on, stream socket pairs and subprocesses, still works under the
// datagram rule.
func TestSocketpairStreamWorks(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	forEach(t, func(t *testing.T, w *workspace) {
		r := w.sh(fsSettings(writeCwd), `python3 -c '
import socket, subprocess
a, b = socket.socketpair()
a.sendall(b"ping"); print("pair", b.recv(4).decode())
s, t = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.send(b"seq"); print("seqpacket", t.recv(3).decode())
print("child", subprocess.run(["echo", "out"], capture_output=True, text=True).stdout.strip())
try:
    socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
except PermissionError:
    print("dgram refused")
'`)
		expect(t, r, 0, "pair ping", "seqpacket seq", "child out", "dgram refused")
	})
}

// TestEscapeSetID: a command that may write a directory makes a
// set-user-ID file there; no_new_privs holds only inside, so on the host
// the file runs as its owner for whoever starts it, and under a root-run
// srt that owner is root. Every way to set S_ISUID or S_ISGID fails with
// EPERM (openat2 with ENOSYS, so callers fall back to openat), for every
// user; modes without those bits still work. A file capability needs
// CAP_SETFCAP, which the sandbox does not have.
func TestEscapeSetID(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		s := fsSettings(writeCwd)
		p := w.probe(s, "setid", w.dir)
		want(t, p, "create", "ok", "chmod-4755", "EPERM", "chmod-2755", "EPERM", "fchmodat-6755", "EPERM",
			"fchmod-4755", "EPERM", "fchmodat2-4755", "EPERM", "open-creat-4755", "EPERM",
			"open-tmpfile-2755", "EPERM", "mknodat-4755", "EPERM", "openat2-4755", "ENOSYS",
			"setcap-setuid", "EPERM", "chmod-0755", "ok", "open-creat-0644", "ok")
		// The tools a command would use.
		r := w.sh(s, "cp /usr/bin/id ./id && chmod u+s ./id; install -m 4755 /usr/bin/id ./id2; cp /usr/bin/id ./id3 && chmod 2755 ./id3; echo done")
		expect(t, r, 0, "done", "Operation not permitted")
		noSetID(t, w.dir)

		// Control: outside the sandbox the same probe sets the bits.
		hostDir := w.mkdir("home/host-setid")
		c := w.hostProbe("setid", hostDir)
		want(t, c, "chmod-4755", "ok", "fchmodat-6755", "ok", "open-creat-4755", "ok", "mknodat-4755", "ok")
		if fi, err := os.Stat(filepath.Join(hostDir, "probe-setid-new")); err != nil || fi.Mode()&os.ModeSetuid == 0 {
			t.Fatalf("control: the file made outside the sandbox is not set-user-ID: %v %v", fi, err)
		}
		if w.r.uid == 0 { // only root holds CAP_SETFCAP outside
			want(t, c, "setcap-setuid", "ok")
		}
		os.RemoveAll(hostDir)
	})
}

// noSetID fails the test when a file below dir is set-user-ID or
// set-group-ID.
func noSetID(t *testing.T, dir string) {
	t.Helper()
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
			t.Errorf("ESCAPE: %s is %v on the host", p, fi.Mode())
		}
		return nil
	})
}
