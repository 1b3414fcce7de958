//go:build linux

package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sshServer is an sshd on a loopback port, run by the (root) test process,
// that lets the runner in with a throwaway key.
type sshServer struct {
	port int
}

func startSSHD(t *testing.T, w *workspace) *sshServer {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run sshd for the runner")
	}
	sshd, err := exec.LookPath("sshd")
	if err != nil {
		if _, err2 := os.Stat("/usr/sbin/sshd"); err2 != nil {
			t.Fatalf("sshd is needed (Debian: openssh-server): %v", err)
		}
		sshd = "/usr/sbin/sshd"
	}
	os.MkdirAll("/run/sshd", 0o755)
	if shadow, err := os.ReadFile("/etc/shadow"); err == nil && w.r.uid != 0 && locked(string(shadow), w.r.name) {
		t.Fatalf("user %s is locked, and sshd refuses locked accounts; scripts/test creates it unlocked (usermod -p '*' %s)", w.r.name, w.r.name)
	}
	dir := w.mkdir("sshd")
	keygen := func(path string) {
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", path).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v %s", err, out)
		}
	}
	keygen(dir + "/host_key")
	w.mkdir("home/.ssh")
	keygen(w.path("home/.ssh/id_ed25519"))
	w.chown(w.path("home/.ssh"))
	w.chown(w.path("home/.ssh/id_ed25519"))
	w.chown(w.path("home/.ssh/id_ed25519.pub"))
	pub, _ := os.ReadFile(w.path("home/.ssh/id_ed25519.pub"))
	os.WriteFile(dir+"/authorized_keys", pub, 0o644)
	w.write("home/.ssh/config", "Host 127.0.0.1\n  IdentityFile "+w.path("home/.ssh/id_ed25519")+"\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n")
	os.Chmod(w.path("home/.ssh/config"), 0o600)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cfg := fmt.Sprintf("ListenAddress 127.0.0.1:%d\nHostKey %s/host_key\nAuthorizedKeysFile %s/authorized_keys\nStrictModes no\nUsePAM no\nPidFile none\nPasswordAuthentication no\nPermitRootLogin prohibit-password\n", port, dir, dir)
	os.WriteFile(dir+"/sshd_config", []byte(cfg), 0o644)
	cmd := exec.Command(sshd, "-D", "-e", "-f", dir+"/sshd_config")
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitFor(t, func() bool {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 100*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, "sshd to listen:\n"+out.String())
	return &sshServer{port: port}
}

// bareRepo makes a bare git repository in the workspace with one commit
// on main, whose README holds readme: made as root, handed to the runner
// once filled.
func bareRepo(t *testing.T, w *workspace, readme string) string {
	repo, src := w.path("repo.git"), w.path("src")
	os.MkdirAll(repo, 0o755)
	os.MkdirAll(src, 0o755)
	git := func(dir string, args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "HOME="+w.home,
			"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=safe.directory", "GIT_CONFIG_VALUE_0=*")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git(repo, "init", "-q", "--bare")
	os.WriteFile(filepath.Join(src, "README"), []byte(readme), 0o644)
	git(src, "init", "-q")
	git(src, "add", "README")
	git(src, "commit", "-q", "-m", "first")
	git(src, "push", "-q", repo, "HEAD:refs/heads/main")
	exec.Command("chown", "-R", fmt.Sprintf("%d:%d", w.r.uid, w.r.gid), repo).Run()
	return repo
}

func TestGitOverSSH(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		srv := startSSHD(t, w)
		repo := bareRepo(t, w, "over ssh through the proxy\n")
		user := w.r.name
		url := fmt.Sprintf("ssh://%s@127.0.0.1:%d%s", user, srv.port, repo)
		s := `{"network":{"allowedDomains":["127.0.0.1:` + strconv.Itoa(srv.port) + `"],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}`
		// ssh finds its config through the passwd entry, not $HOME: name
		// the test's client config on top of srt's ProxyCommand.
		ssh := `GIT_SSH_COMMAND="$GIT_SSH_COMMAND -F $HOME/.ssh/config" `
		r := w.sh(s, ssh+"git clone -q -b main "+url+" out && cat out/README")
		expect(t, r, 0, "over ssh through the proxy")
		// The same clone with the host off the list: refused by the proxy.
		denied := `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}`
		r = w.sh(denied, ssh+"git clone -q "+url+" out2")
		expect(t, r, 128, fmt.Sprintf("sandbox proxy: 127.0.0.1:%d: 403 host is not on the allow list", srv.port))
	})
}

// locked says whether name's shadow entry is locked ("!…").
func locked(shadow, name string) bool {
	for _, line := range strings.Split(shadow, "\n") {
		if f := strings.SplitN(line, ":", 3); len(f) >= 2 && f[0] == name {
			return strings.HasPrefix(f[1], "!")
		}
	}
	return false
}
