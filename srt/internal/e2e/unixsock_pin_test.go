//go:build linux

package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// waitScript waits, at most 20 s, for the file named by its argument.
const waitScript = `i=0; while [ ! -e "$1" ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done`

// TestUnixSocketsPinned: a listed socket the command could replace (it
// may write the directory holding it) is pinned to the socket there when
// srt starts. Renaming another host socket over it, or the directory
// holding it aside and another in its place, reaches nothing, in this run
// and the next (srt pins only a socket bound there: sock_diag's name); a
// daemon that makes its socket again while the command runs is out of
// reach until the next run. A listed path with no socket at start, where the
// sandbox may write, is warned of and reaches no host socket, though the
// command's own socket there works; out of the sandbox's writes, a daemon
// that starts after srt is reached. A listed directory the sandbox may
// write is refused at start, naming the entry and what to do; made
// read-only, it works, and nothing can be moved into it.
func TestUnixSocketsPinned(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		agentDir := w.mkdir("home/proj/agent")
		w.mkdir("home/proj/priv")
		socks := w.mkdir("socks")
		listed := filepath.Join(agentDir, "agent.sock")
		later := filepath.Join(agentDir, "later.sock")
		priv := filepath.Join(w.dir, "priv", "priv.sock")
		priv2 := filepath.Join(w.dir, "priv", "priv2.sock")
		late := filepath.Join(socks, "late.sock")
		daemon, _ := w.startUnixServerCmd("s=" + listed)
		w.startUnixServer("s="+priv, "s="+priv2)
		w.write("home/proj/client.py", unixClient)
		w.write("home/proj/wait.sh", waitScript)
		s := w.settings(unixSettings(writeCwd, listed, later, late))

		// The pinned socket is reached; one renamed over it is not, nor one
		// in a directory put in the place of the one holding it.
		r := w.srt("-s", s, "--show-violations", "-c", `python3 client.py c=agent/agent.sock
mv priv/priv.sock agent/agent.sock && python3 client.py c=agent/agent.sock
mkdir agent2 && mv priv/priv2.sock agent2/agent.sock && mv agent agent.old && mv agent2 agent && python3 client.py c=`+listed)
		expect(t, r, 0, "CONNECTED hello from "+listed,
			"REFUSED agent/agent.sock PermissionError 13", "REFUSED "+listed+" PermissionError 13",
			"deny unix-connect "+listed+" (not the socket that was there when the sandbox started",
			"!hello from "+priv, "!network.allowUnixSockets.0")
		// The next run finds there a socket bound elsewhere: not pinned.
		r = w.srt("-s", s, "--show-violations", "-c", "python3 client.py c=agent/agent.sock")
		expect(t, r, 0, "REFUSED agent/agent.sock PermissionError 13",
			"network.allowUnixSockets.0: the socket at "+listed+` was bound as "`+priv2+`": it was moved there`,
			"deny unix-connect "+listed+" (srt found no socket its daemon bound there when the sandbox started", "!hello from "+priv)
		// Its daemon restarted, the socket there is its own again.
		daemon.Process.Kill()
		daemon.Wait()
		for _, d := range []string{"agent", "agent.old"} {
			os.RemoveAll(filepath.Join(w.dir, d))
		}
		w.mkdir("home/proj/agent")
		daemon, _ = w.startUnixServerCmd("s=" + listed)
		expect(t, w.srt("-s", s, "-c", "python3 client.py c=agent/agent.sock"), 0, "CONNECTED hello from "+listed, "!network.allowUnixSockets.0")

		// later.sock: warned of; the command's own socket there works, a
		// host socket moved there does not.
		w.startUnixServer("s=" + priv)
		r = w.srt("-s", s, "--show-violations", "-c", `python3 -c '
import socket
l = socket.socket(socket.AF_UNIX); l.bind("agent/later.sock"); l.listen(1)
c = socket.socket(socket.AF_UNIX); c.connect("agent/later.sock"); print("OWN", l.accept()[0] is not None)
'
rm agent/later.sock; mv priv/priv.sock agent/later.sock && python3 client.py c=agent/later.sock`)
		own := "OWN True"
		if skipPart(t, "own socket") {
			// Its own socket is refused as a host daemon's would be.
			own = "PermissionError: [Errno 13] Permission denied"
		}
		expect(t, r, 0, own, "REFUSED agent/later.sock PermissionError 13",
			"network.allowUnixSockets.1: "+later+" is no socket now, and the sandbox may write "+agentDir+" (filesystem.allowWrite.0)",
			"deny unix-connect "+later+" (srt found no socket its daemon bound there when the sandbox started", "!hello from "+priv)
		os.Remove(later)

		// The daemon makes its socket again while the command runs (an
		// ssh-agent restarted): the new one is another inode, refused;
		// the next run pins it. late.sock, where the sandbox may not
		// write, is reached once its daemon starts.
		var out, errb bytes.Buffer
		cmd := w.command(nil, "-s", s, "--show-violations", "-c", `python3 client.py c=agent/agent.sock; touch first
sh wait.sh restarted; python3 client.py c=agent/agent.sock c=`+late)
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, func() bool { return exists(filepath.Join(w.dir, "first")) }, "the first connect")
		daemon.Process.Kill()
		daemon.Wait()
		os.Remove(listed)
		w.startUnixServer("s="+listed, "s="+late)
		w.write("home/proj/restarted", "")
		waitExit(t, cmd, &out)
		r = result{stdout: out.String(), stderr: errb.String(), code: cmd.ProcessState.ExitCode()}
		expect(t, r, 0, "CONNECTED hello from "+listed, "REFUSED agent/agent.sock PermissionError 13",
			"deny unix-connect "+listed+" (not the socket that was there when the sandbox started", "CONNECTED hello from "+late)
		if n := strings.Count(r.stdout, "CONNECTED hello from "+listed); n != 1 {
			t.Fatalf("the restarted daemon's socket was reached in the same run:\n%s", r)
		}
		expect(t, w.srt("-s", s, "-c", "python3 client.py c=agent/agent.sock"), 0, "CONNECTED hello from "+listed)

		// A directory the sandbox may write: refused at start.
		r = w.srt("-s", w.settings(unixSettings(writeCwd, agentDir)), "-c", "echo RAN")
		expect(t, r, 1, `network.allowUnixSockets.0 "`+agentDir+`": `+agentDir+" is a directory, and the sandbox may write "+agentDir+
			" (filesystem.allowWrite.0): the command could move any host socket it may rename into the directory and reach it; list the socket files in it instead",
			"or keep "+agentDir+" read-only (filesystem.denyWrite)", "!RAN")
		// Read-only as the message says: its sockets are reached, nothing
		// can be moved into it.
		w.startUnixServer("s=" + priv)
		ro := unixSettings(`{"denyRead":[],"allowWrite":["."],"denyWrite":["agent"]}`, agentDir)
		r = w.srt("-s", w.settings(ro), "-c", "python3 client.py c=agent/agent.sock; mv priv/priv.sock agent/x.sock || echo NOT-MOVED")
		expect(t, r, 0, "CONNECTED hello from "+listed, "NOT-MOVED")
	})
}

// TestUnixSocketsProcFd: the command names a socket through a descriptor
// it holds (an O_PATH one): /dev/fd/N, /proc/self/fd/N,
// /proc/thread-self/fd/N, /proc/PID/fd/N, a symlink to /dev/fd/N, and
// /dev/fd/N from another thread are its own descriptor, as the kernel
// resolves them for it, so a listed socket is reached and an unlisted one
// refused, whichever name.
func TestUnixSocketsProcFd(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		socks := w.mkdir("socks")
		a, b := filepath.Join(socks, "a.sock"), filepath.Join(socks, "b.sock")
		w.startUnixServer("s="+a, "s="+b)
		w.write("home/proj/procfd.py", `
import os, socket, sys, threading
fd = os.open(sys.argv[1], os.O_PATH)
os.symlink("/dev/fd/%d" % fd, "fd.lnk")
def try_(p, who="main"):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(p); print("CONNECTED", who, p, s.recv(100).decode().strip())
    except OSError as e:
        print("REFUSED", who, p, e.errno)
for p in ("/dev/fd/%d", "/proc/self/fd/%d", "/proc/thread-self/fd/%d", "/proc/" + str(os.getpid()) + "/fd/%d"):
    try_(p % fd)
try_("fd.lnk")
t = threading.Thread(target=try_, args=("/dev/fd/%d" % fd, "thread")); t.start(); t.join()
`)
		s := w.settings(unixSettings(writeCwd, a))
		r := w.srt("-s", s, "-c", "python3 procfd.py "+a)
		expect(t, r, 0, "CONNECTED main /dev/fd/3 hello from "+a, "CONNECTED main /proc/self/fd/3 hello from "+a,
			"CONNECTED main /proc/thread-self/fd/3 hello from "+a, "CONNECTED main fd.lnk hello from "+a,
			"CONNECTED thread /dev/fd/3 hello from "+a, "!REFUSED")
		if n := strings.Count(r.stdout, "CONNECTED"); n != 6 {
			t.Fatalf("want 6 connections:\n%s", r)
		}
		os.Remove(filepath.Join(w.dir, "fd.lnk"))
		r = w.srt("-s", s, "--show-violations", "-c", "python3 procfd.py "+b)
		expect(t, r, 0, "REFUSED main /dev/fd/3 13", "REFUSED main /proc/self/fd/3 13", "REFUSED main /proc/thread-self/fd/3 13",
			"REFUSED main fd.lnk 13", "REFUSED thread /dev/fd/3 13", "deny unix-connect /dev/fd/3 (resolves to "+b+")", "!CONNECTED")
	})
}
