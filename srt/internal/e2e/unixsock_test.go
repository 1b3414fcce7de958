//go:build linux

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostCmd prepares a program to run on the host (outside any sandbox) as
// the runner, with the workspace's environment.
func (w *workspace) hostCmd(env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = w.dir
	cmd.Env = w.env(env...)
	if os.Geteuid() == 0 && w.r.uid != 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(w.r.uid), Gid: uint32(w.r.gid), Groups: []uint32{}}}
	}
	return cmd
}

// unixServer is a python3 on the host serving Unix sockets: each stream
// socket answers every connection with "hello from PATH", each datagram
// socket prints what it receives as "dgram PATH DATA".
const unixServer = `
import socket, sys, threading, time
def stream(p):
    s = socket.socket(socket.AF_UNIX); s.bind(p); s.listen(64)
    while True:
        c, _ = s.accept(); c.sendall(b"hello from " + p.encode().lstrip(b"\0") + b"\n"); c.close()
def dgram(p):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(p)
    while True:
        d = s.recv(100); print("dgram", p, d.decode(), flush=True)
for a in sys.argv[1:]:
    kind, p = a.split("=", 1)
    p = p.replace("@", "\0", 1) if p.startswith("@") else p
    threading.Thread(target=stream if kind == "s" else dgram, args=(p,), daemon=True).start()
time.sleep(0.3)
print("ready", flush=True)
time.sleep(120)
`

// startUnixServer runs unixServer as the runner with specs "s=PATH" or
// "d=PATH" ("@name" for an abstract stream socket) and returns what it
// printed so far, read on demand.
func (w *workspace) startUnixServer(specs ...string) func() string {
	w.t.Helper()
	_, got := w.startUnixServerCmd(specs...)
	return got
}

// startUnixServerCmd is startUnixServer, and returns the server's process
// too (to stop it early).
func (w *workspace) startUnixServerCmd(specs ...string) (*exec.Cmd, func() string) {
	w.t.Helper()
	cmd := w.hostCmd(nil, "/usr/bin/python3", append([]string{"-c", unixServer}, specs...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 100)
	sc := bufio.NewScanner(out)
	sc.Scan()
	if sc.Text() != "ready" {
		w.t.Fatalf("the socket server did not start: %q", sc.Text())
	}
	go func() {
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var got []string
	return cmd, func() string {
		deadline := time.After(2 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					return strings.Join(got, "\n")
				}
				got = append(got, l)
				continue
			case <-deadline:
			}
			return strings.Join(got, "\n")
		}
	}
}

func unixSettings(fs string, allowed ...string) string {
	list, _ := json.Marshal(allowed)
	return `{"network":{"allowedDomains":[],"deniedDomains":[],"allowUnixSockets":` + string(list) + `},"filesystem":` + fs + `}`
}

// unixClient connects (c=PATH) or sends a datagram (d=PATH) to each
// argument and prints the outcome, one line each.
const unixClient = `
import socket, sys
for a in sys.argv[1:]:
    kind, p = a.split("=", 1)
    p = p.replace("@", "\0", 1) if p.startswith("@") else p
    try:
        if kind == "c":
            s = socket.socket(socket.AF_UNIX); s.connect(p); print("CONNECTED", s.recv(200).decode().strip())
        else:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.sendto(b"payload", p); print("SENT", p)
    except OSError as e:
        print("REFUSED", p.lstrip("\0"), type(e).__name__, e.errno)
`

// TestUnixSocketsAllowList: with network.allowUnixSockets the command
// reaches exactly the listed host sockets (a file, and every socket
// beneath a listed directory), by stream and by datagram; any other host
// socket fails with EACCES and a violation names it, even when reached
// through a symlink, or a hard link in a listed directory (made on the
// host: the sandbox may not write a listed directory, see
// TestUnixSocketsPinned); sockets the command binds itself work; a host
// abstract socket is out of reach.
func TestUnixSocketsAllowList(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		socks := w.mkdir("socks")
		w.mkdir("socks/dir")
		a, b := filepath.Join(socks, "a.sock"), filepath.Join(socks, "b.sock")
		ad, bd := filepath.Join(socks, "ad.sock"), filepath.Join(socks, "bd.sock")
		inDir := filepath.Join(socks, "dir", "c.sock")
		// a host socket in the writable directory, hard-linked into the
		// listed directory
		hostInCwd := filepath.Join(w.dir, "host.sock")
		hard := filepath.Join(socks, "dir", "hard.sock")
		abstract := fmt.Sprintf("@srt-e2e-%d", os.Getpid())
		got := w.startUnixServer("s="+a, "s="+b, "d="+ad, "d="+bd, "s="+inDir, "s="+hostInCwd, "s="+abstract)
		if err := os.Link(hostInCwd, hard); err != nil {
			t.Fatal(err)
		}
		w.write("home/proj/client.py", unixClient)
		w.mkdir("home/proj/own")
		s := unixSettings(writeCwd, a, ad, filepath.Join(socks, "dir"))
		r := w.srt("-s", w.settings(s), "--show-violations", "-c",
			"ln -s "+b+" own/link.sock; python3 client.py c="+a+" c="+b+" d="+ad+" d="+bd+" c="+inDir+
				" c=own/link.sock c="+hard+" c="+abstract)
		// The host's abstract name: not there in the sandbox's own network
		// namespace; without one (the Landlock backend), refused as
		// Landlock's scope refuses it.
		abstractRefused := "REFUSED " + abstract[1:] + " ConnectionRefusedError 111"
		if testBackend == "landlock" {
			abstractRefused = "REFUSED " + abstract[1:] + " PermissionError 1"
		}
		expect(t, r, 0,
			"CONNECTED hello from "+a,
			"REFUSED "+b+" PermissionError 13",
			"SENT "+ad,
			"REFUSED "+bd+" PermissionError 13",
			"CONNECTED hello from "+inDir,
			"REFUSED own/link.sock PermissionError 13",
			"REFUSED "+hard+" PermissionError 13",
			abstractRefused,
			"deny unix-connect "+b+"\n",
			"deny unix-send "+bd+"\n",
			"deny unix-connect "+filepath.Join(w.dir, "own/link.sock")+" (resolves to "+b+")",
			"deny unix-connect "+hard+" (a hard link",
			"!hello from "+b, "!hello from "+hostInCwd)
		if out := got(); !strings.Contains(out, "dgram "+ad+" payload") || strings.Contains(out, bd) {
			t.Fatalf("the host's datagram sockets received:\n%s\nwant only %s", out, ad)
		}

		// A socket the command binds in its writable space, stream and
		// datagram, and through a relative path.
		r = w.srt("-s", w.settings(s), "-c", `python3 -c '
import socket, os
l = socket.socket(socket.AF_UNIX); l.bind("own/own.sock"); l.listen(1)
c = socket.socket(socket.AF_UNIX); c.connect(os.getcwd() + "/own/own.sock"); c.sendall(b"x")
n, _ = l.accept(); print("OWN STREAM", n.recv(1))
d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); d.bind("own/own-d.sock")
socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"y", "own/own-d.sock"); print("OWN DGRAM", d.recv(1))
'`)
		if skipPart(t, "own sockets") {
			// Without a network namespace srt cannot tell a socket the
			// command bound from a host daemon's: it refuses both.
			expect(t, r, 1, "PermissionError: [Errno 13] Permission denied", "!OWN STREAM")
		} else {
			expect(t, r, 0, "OWN STREAM b'x'", "OWN DGRAM b'y'")
		}

		// Without the list nothing of the host is reachable, and no
		// socket can even be made (the reference's behaviour).
		r = w.srt("-s", w.settings(fsSettings(writeCwd)), "-c", "python3 client.py c="+a)
		expect(t, r, 0, "REFUSED "+a+" PermissionError 1")
	})
}

// TestUnixSocketsSymlinkRace swaps a symlink between the allowed socket
// and a denied one while the command connects through it, many times:
// the decision is taken on the inode that is connected, so the denied
// socket is never reached, whichever way each race goes.
func TestUnixSocketsSymlinkRace(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		socks := w.mkdir("socks")
		a, b := filepath.Join(socks, "a.sock"), filepath.Join(socks, "b.sock")
		w.startUnixServer("s="+a, "s="+b)
		w.write("home/proj/race.py", `
import os, socket, sys, threading
a, b = sys.argv[1], sys.argv[2]
stop = False
def swap():
    i = 0
    while not stop:
        os.symlink(a if i % 2 else b, "tmp.lnk"); os.rename("tmp.lnk", "link.sock"); i += 1
threading.Thread(target=swap, daemon=True).start()
ok = refused = 0
for _ in range(400):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect("link.sock"); got = s.recv(100).decode()
        if b in got: print("REACHED-DENIED"); break
        ok += 1
    except PermissionError:
        refused += 1
    except (FileNotFoundError, ConnectionRefusedError):
        pass
    s.close()
stop = True
print("allowed", ok > 0, "refused", refused > 0)
`)
		r := w.srt("-s", w.settings(unixSettings(writeCwd, a)), "-c", "ln -s "+a+" link.sock; python3 race.py "+a+" "+b)
		expect(t, r, 0, "allowed True refused True", "!REACHED-DENIED")
	})
}

// TestUnixSocketsSSHAgent: a host ssh-agent whose socket is listed
// answers ssh-add inside; unlisted, ssh-add cannot reach it.
func TestUnixSocketsSSHAgent(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		sock := filepath.Join(w.mkdir("agent"), "agent.sock")
		agent := w.hostCmd(nil, "ssh-agent", "-D", "-a", sock)
		if err := agent.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { agent.Process.Kill(); agent.Wait() })
		for i := 0; i < 50 && !exists(sock); i++ {
			time.Sleep(50 * time.Millisecond)
		}
		env := []string{"SSH_AUTH_SOCK=" + sock}
		r := w.srtEnv(env, "-s", w.settings(unixSettings(writeCwd, sock)), "-c", "ssh-add -l")
		expect(t, r, 1, "The agent has no identities.")
		r = w.srtEnv(env, "-s", w.settings(unixSettings(writeCwd, "/nonexistent/other.sock")), "--show-violations", "-c", "ssh-add -l")
		expect(t, r, 2, "Error connecting to agent: Permission denied", "deny unix-connect "+sock, "!The agent has no identities.")
	})
}

// TestUnixSocketsGPGSigning: git signs a commit inside through the host's
// gpg-agent, its socket listed; unlisted, signing fails.
func TestUnixSocketsGPGSigning(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		gnupg := w.mkdir("gnupg")
		os.Chmod(gnupg, 0o700)
		env := []string{"GNUPGHOME=" + gnupg}
		run := func(name string, args ...string) string {
			cmd := w.hostCmd(env, name, args...)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s %v: %v\n%s", name, args, err, out)
			}
			return strings.TrimSpace(string(out))
		}
		run("gpg", "--batch", "--passphrase", "", "--quick-gen-key", "srt test <srt@test.invalid>", "ed25519", "sign", "never")
		sock := run("gpgconf", "--list-dirs", "agent-socket")
		t.Cleanup(func() { w.hostCmd(env, "gpgconf", "--kill", "gpg-agent").Run() })
		script := `set -e; git init -q "$R"; cd "$R"
git -c user.name=t -c user.email=srt@test.invalid -c user.signingkey=srt@test.invalid -c commit.gpgsign=true commit -q --allow-empty -m signed
echo COMMITTED`
		// GNUPGHOME read-only: gpg inside cannot start an agent of its own
		// there, so the signature comes from the host's.
		fs := writeCwd
		r := w.srtEnv(env, "-s", w.settings(unixSettings(fs, sock)), "-c", "R=repo1; "+script)
		expect(t, r, 0, "COMMITTED")
		// verified on the host (the trustdb is read-only inside)
		if out := run("git", "-C", "repo1", "log", "--show-signature", "-1"); !strings.Contains(out, `Good signature from "srt test <srt@test.invalid>"`) {
			t.Fatalf("the commit made inside is not signed by the key:\n%s", out)
		}
		r = w.srtEnv(env, "-s", w.settings(unixSettings(fs, "/nonexistent/other.sock")), "--show-violations", "-c", "R=repo2; "+script)
		expect(t, r, 128, "gpg failed to sign the data", "deny unix-connect "+sock)
	})
}
