//go:build linux

package e2e

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Hostile review of d578f73 (review/llro2): every Unix connect of the
// Landlock backend goes through the Unix socket gate, which, without an
// allowUnixSockets list, allows every path (AllowAll) and connects "with
// the command's credentials". Tests showing an open hole are gated by
// openFinding (SRT_REVIEW_OPEN=1 runs them).

// allUnixSettings: allowAllUnixSockets, the one setting under which the
// command may make a Unix socket and the AllowAll gate decides its
// connects.
const allUnixSettings = `{"network":{"allowedDomains":[],"deniedDomains":[],"allowAllUnixSockets":true},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`

// llro2Client connects to each argument and prints CONNECTED and what
// the server says, or REFUSED and the errno's name; STAT lines say what
// the command's own stat(2) of the path gives.
const llro2Client = `
import socket, sys, os, errno
for p in sys.argv[1:]:
    try:
        os.stat(p); print("STAT", p, "ok")
    except OSError as e:
        print("STAT", p, errno.errorcode.get(e.errno, e.errno))
    try:
        s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(p)
        print("CONNECTED", p, s.recv(100).decode().strip())
    except OSError as e:
        print("REFUSED", p, errno.errorcode.get(e.errno, e.errno))
`

// llro2Serve listens on the Unix socket path (mode 0777) and answers each
// connection with "SECRET-"+tag.
func llro2Serve(t *testing.T, path, tag string) {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o777)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("SECRET-" + tag + "\n"))
			c.Close()
		}
	}()
}

// TestReviewLLRO2UnixDirSearchDeputy: a socket (mode 0777) in a
// directory of mode 0700 owned by another user. The command cannot
// search the directory (root runs without CAP_DAC_READ_SEARCH and
// CAP_DAC_OVERRIDE), so its own connect would fail with EACCES. The
// AllowAll gate resolves the path in the init stage (resolve: O_PATH
// opens with the init stage's credentials, a root caller's capabilities
// all there) and connects, as the command, to /proc/self/fd/N: the magic
// link skips the directory's search permission, and the kernel checks
// write permission on the socket inode alone, which 0777 gives.
// Found: root reaches the socket (the session bus in /run/user/UID,
// an agent's socket in a 0700 directory). Expected: EACCES, as the
// command's own connect.
func TestReviewLLRO2UnixDirSearchDeputy(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		if w.r.uid == 0 {
			openFinding(t, "the AllowAll gate resolves a Unix socket path with the init stage's capabilities: a root command reaches a socket in another user's 0700 directory")
		}
		other := 0
		if w.r.uid == 0 {
			other = runners(t)[1].uid
		}
		dir := filepath.Join(w.root, "private")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		os.Chown(dir, other, other)
		sock := filepath.Join(dir, "s")
		llro2Serve(t, sock, "DIR")
		os.Chown(sock, other, other)
		w.write("client.py", llro2Client)
		r := w.landlock(allUnixSettings, "python3 "+w.path("client.py")+" "+sock)
		if strings.Contains(r.stdout, "SECRET-DIR") {
			t.Errorf("ESCAPE: the command reached a socket in a 0700 directory of another user it cannot search\n%s", r)
		}
		expect(t, r, 0, "STAT "+sock+" EACCES", "REFUSED "+sock+" EACCES")
	})
}

// TestReviewLLRO2UnixProcRootDeputy: a host process (the runner's own)
// in a mount namespace of its own serves a socket on a tmpfs there, which
// the host's tree does not have. The command may not follow
// /proc/PID/root or /proc/PID/cwd of a process outside its Landlock
// domain (Landlock's ptrace scope: EACCES; for root, also the missing
// CAP_SYS_PTRACE), so its own connect would fail. The AllowAll gate's
// resolve, run by the init stage (outside that domain, with its
// capabilities), follows those magic links. Expected: EACCES, as the
// command's own connect.
func TestReviewLLRO2UnixProcRootDeputy(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		openFinding(t, "the AllowAll gate resolves /proc/PID/root and /proc/PID/cwd outside the command's Landlock domain: a socket in another mount namespace (another sandbox's, a container's) is reached")
		if os.Geteuid() != 0 {
			t.Skip("needs root to make the helper's mount namespace")
		}
		mnt := w.mkdir("nsdir")
		script := `import socket, os, sys
s = socket.socket(socket.AF_UNIX); s.bind("s"); os.chmod("s", 0o777); s.listen(8)
print("READY", flush=True)
while True:
    c, _ = s.accept(); c.sendall(b"SECRET-NS\n"); c.close()
`
		creds := ""
		if w.r.uid != 0 {
			creds = "setpriv --reuid=" + itoa(w.r.uid) + " --regid=" + itoa(w.r.gid) + " --clear-groups "
		}
		helper := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c",
			"mount -t tmpfs -o mode=0755 none "+mnt+" && cd "+mnt+" && chmod 0777 . && exec "+creds+"/usr/bin/python3 -c '"+script+"'")
		out, _ := helper.StdoutPipe()
		helper.Stderr = os.Stderr
		if err := helper.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { helper.Process.Kill(); helper.Wait() })
		ready := make(chan bool, 1)
		go func() {
			line, _ := bufio.NewReader(out).ReadString('\n')
			ready <- strings.HasPrefix(line, "READY")
		}()
		select {
		case ok := <-ready:
			if !ok {
				t.Fatal("helper did not start")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("helper did not start in 10 s")
		}
		pid := itoa(helper.Process.Pid)
		if _, err := os.Stat(filepath.Join(mnt, "s")); err == nil {
			t.Fatal("the helper's socket is in the host's tree")
		}
		viaRoot := "/proc/" + pid + "/root" + mnt + "/s"
		viaCwd := "/proc/" + pid + "/cwd/s"
		w.write("client.py", llro2Client)
		r := w.landlock(allUnixSettings, "python3 "+w.path("client.py")+" "+viaRoot+" "+viaCwd)
		if strings.Contains(r.stdout, "SECRET-NS") {
			t.Errorf("ESCAPE: the command reached a socket of another mount namespace through /proc/PID/{root,cwd}\n%s", r)
		}
		expect(t, r, 0, "STAT "+viaRoot+" EACCES", "REFUSED "+viaRoot+" EACCES", "REFUSED "+viaCwd+" EACCES")
	})
}

