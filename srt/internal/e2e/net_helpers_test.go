//go:build linux

package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// upstream is a loopback HTTP server on the host that answers every
// request with what it received.
type upstream struct {
	port int
	srv  *http.Server
}

func startUpstream(t *testing.T) *upstream {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &upstream{port: ln.Addr().(*net.TCPAddr).Port}
	u.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var names []string
		for n := range r.Header {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintf(w, "upstream saw %s %s host=%s\n", r.Method, r.URL.RequestURI(), r.Host)
		for _, n := range names {
			fmt.Fprintf(w, "header %s: %s\n", strings.ToLower(n), strings.Join(r.Header[n], ", "))
		}
		fmt.Fprintf(w, "body %q\n", body)
	})}
	go u.srv.Serve(ln)
	t.Cleanup(func() { u.srv.Close() })
	return u
}

func (u *upstream) addr() string { return "127.0.0.1:" + strconv.Itoa(u.port) }

// netSettings is a settings file with these network lists and no
// filesystem rules beyond the defaults.
func netSettings(allowed, denied []string, extra string) string {
	q := func(l []string) string {
		if len(l) == 0 {
			return "[]"
		}
		return `["` + strings.Join(l, `","`) + `"]`
	}
	return `{"network":{"allowedDomains":` + q(allowed) + `,"deniedDomains":` + q(denied) + extra + `},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`
}

// withHosts runs srt with a private /etc/hosts (for names that resolve to
// loopback): root makes a mount namespace, binds the file over /etc/hosts
// and, for the unprivileged runner, drops to it with setpriv.
func (w *workspace) withHosts(hosts string, args ...string) result {
	w.t.Helper()
	return w.withHostsBin(hosts, filepath.Join(bin, "srt"), nil, args...)
}

// hostsCommand prepares srt (the binary srt) with a private /etc/hosts,
// without starting it (see withHosts).
func (w *workspace) hostsCommand(hosts, srt string, env []string, args ...string) *exec.Cmd {
	w.t.Helper()
	if os.Geteuid() != 0 {
		w.t.Skip("needs root to give srt a private /etc/hosts (the test would otherwise edit the machine's)")
	}
	hostsFile := w.write("hosts", hosts)
	inner := []string{srt}
	if w.r.uid != 0 {
		inner = []string{"setpriv", "--reuid", strconv.Itoa(w.r.uid), "--regid", strconv.Itoa(w.r.gid), "--clear-groups", "--", srt}
	}
	script := `mount --bind "$0" /etc/hosts && exec "$@"`
	all := append([]string{"--mount", "--propagation", "private", "--", "sh", "-c", script, hostsFile}, append(inner, args...)...)
	cmd := exec.Command("unshare", all...)
	cmd.Dir, cmd.Env = w.dir, w.env(env...)
	return cmd
}

// withHostsBin is withHosts with another srt binary and more environment.
func (w *workspace) withHostsBin(hosts, srt string, env []string, args ...string) result {
	w.t.Helper()
	cmd := w.hostsCommand(hosts, srt, env, args...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Run()
	return result{stdout: out.String(), stderr: errb.String(), code: cmd.ProcessState.ExitCode()}
}
