//go:build linux || darwin

package sandbox

// What runs srt's proxy on the host's loopback, for a command that shares
// the host's network: the Landlock backend's (its listeners and proxy
// plan; the Manager starts the egress) and macOS's (hostEgress: the
// egress of one command, started by RunMacOS). The same code on Linux
// and macOS, tested on Linux (hostproxy_test.go).

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/decider/control"
	"github.com/srt-sandbox/decider/srtlink"
	"github.com/srt-sandbox/srt/internal/egress"
	"github.com/srt-sandbox/srt/internal/hostexec"
	"github.com/srt-sandbox/srt/internal/kernrand"
	"github.com/srt-sandbox/srt/internal/plan"
	"github.com/srt-sandbox/srt/settings"
)

// The fixes the refusals of a companion program suggest, by how it was
// found.
const (
	fixBeside     = "install srt and its programs in a directory only root or you can write, outside filesystem.allowWrite (or add it to filesystem.denyWrite)"
	fixOnPATH     = "install %[1]s beside srt, or take that directory off PATH"
	fixConfigured = "set Options.%[1]s to a program only root or you can change and no sandbox may write"
)

// hostProgram is a program srt runs, as found.
type hostProgram struct{ name, path, fix string }

// resolve resolves and checks a program on the host (hostexec.Resolve).
func (h hostProgram) resolve() (*hostexec.Program, error) {
	return hostexec.Resolve(h.name, h.path, h.fix, os.Getuid())
}

// companion finds a program srt runs beside itself: configured, beside
// this program's executable, or on PATH; with the fix a refusal of it
// suggests. option names its Options field.
func companion(configured, name, option string) (hostProgram, error) {
	if configured != "" {
		return hostProgram{name, configured, fmt.Sprintf(fixConfigured, option)}, nil
	}
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			p := filepath.Join(filepath.Dir(exe), name)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
				return hostProgram{name, p, fixBeside}, nil
			}
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return hostProgram{}, hostexec.Missingf("the network proxy needs %s, installed beside srt or on PATH (scripts/install installs it)", name)
	}
	if p, err = filepath.Abs(p); err != nil {
		return hostProgram{}, err
	}
	return hostProgram{name, p, fmt.Sprintf(fixOnPATH, name)}, nil
}

// startProgram is the resolved path of a network program, checked on the
// host, as egress starts it.
func startProgram(configured, name, option string) (string, error) {
	h, err := companion(configured, name, option)
	if err != nil {
		return "", err
	}
	prog, err := h.resolve()
	if err != nil {
		return "", err
	}
	return prog.Real, nil
}

// proxyPorts are the ports of a sandbox's HTTP and SOCKS proxies.
type proxyPorts struct{ http, socks int }

// hostListeners listens for the proxies on the host's loopback, on a port
// chosen per run, on 127.0.0.1 and, where the host has it, on the same
// port of ::1 (so that no other program takes the port there and sees the
// credentials of a client that tries "localhost" on ::1 first).
func hostListeners() ([]*os.File, proxyPorts, error) {
	var files []*os.File
	fail := func(err error) ([]*os.File, proxyPorts, error) {
		for _, f := range files {
			f.Close()
		}
		return nil, proxyPorts{}, fmt.Errorf("sandbox: the proxies' ports on the host's loopback: %w", err)
	}
	var ports [2]int
	for i := range ports {
		var err error
		for try := 0; try < 32; try++ {
			var got []*os.File
			got, ports[i], err = listenLoopbackPair()
			if err == nil {
				files = append(files, got...)
				break
			}
			if !errors.Is(err, unix.EADDRINUSE) {
				break
			}
		}
		if err != nil {
			return fail(err)
		}
	}
	return files, proxyPorts{ports[0], ports[1]}, nil
}

// listenLoopbackPair listens on 127.0.0.1 on a free port, then on ::1 on
// the same port.
func listenLoopbackPair() ([]*os.File, int, error) {
	v4, port, err := listenTCP(unix.AF_INET, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}})
	if err != nil {
		return nil, 0, err
	}
	v6, _, err := listenTCP(unix.AF_INET6, &unix.SockaddrInet6{Addr: [16]byte{15: 1}, Port: port})
	switch {
	case err == nil:
		return []*os.File{v4, v6}, port, nil
	case errors.Is(err, unix.EADDRNOTAVAIL) || errors.Is(err, unix.EAFNOSUPPORT):
		return []*os.File{v4}, port, nil // no ::1 on this host
	}
	v4.Close()
	return nil, 0, err
}

func listenTCP(family int, sa unix.Sockaddr) (*os.File, int, error) {
	fd, err := cloexecSocket(family)
	if err != nil {
		return nil, 0, err
	}
	if family == unix.AF_INET6 {
		unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 1)
	}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return nil, 0, err
	}
	if err := unix.Listen(fd, 4096); err != nil {
		unix.Close(fd)
		return nil, 0, err
	}
	f := os.NewFile(uintptr(fd), "srt-proxy-listener")
	return f, localPort(f), nil
}

// localPort is the port a listening socket is bound to (0 if unknown).
func localPort(f *os.File) int {
	sa, err := unix.Getsockname(int(f.Fd()))
	if err != nil {
		return 0
	}
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return a.Port
	case *unix.SockaddrInet6:
		return a.Port
	}
	return 0
}

// parentProxy is network.parentProxy, or else srt's own HTTP_PROXY,
// HTTPS_PROXY and NO_PROXY (either case): the proxy srt itself would use.
func parentProxy(cfg *settings.Config) settings.ParentProxy {
	if p := cfg.Network.ParentProxy; p != nil {
		return *p
	}
	env := func(names ...string) string {
		for _, n := range names {
			if v := os.Getenv(n); v != "" {
				return v
			}
		}
		return ""
	}
	p := settings.ParentProxy{HTTP: env("HTTP_PROXY", "http_proxy"), HTTPS: env("HTTPS_PROXY", "https_proxy"), NoProxy: env("NO_PROXY", "no_proxy")}
	if p.HTTPS == "" {
		p.HTTPS = p.HTTP
	}
	return p
}

// networkOf is the part of the settings the decider applies.
func networkOf(cfg *settings.Config) control.Network {
	return *cfg.Network.Control()
}

// rulesOf are the settings' request options as srt-proxy takes them.
func rulesOf(n *settings.Network) srtlink.Rules {
	return srtlink.Rules{
		RefuseOpaqueTunnels: n.RefuseOpaqueTunnels, RequireHostMatch: n.RequireHostMatch,
		PlaintextHeaderSet: n.AllowPlaintextHeaderSet, AmbiguousTarget: n.AmbiguousRequestTarget,
		StripResponseHeaders: n.StripResponseHeaders,
	}
}

// scrubbedVars are the variables of the credentials block: srt's helpers
// do not inherit them.
func scrubbedVars(cr *settings.Credentials) []string {
	var out []string
	for _, e := range cr.EnvVars {
		out = append(out, e.Name)
	}
	return out
}

// newToken returns 16 random bytes in hex, from the kernel's CSPRNG
// (kernrand: not crypto/rand, whose FIPS module every start would pay for).
func newToken() string {
	b := make([]byte, 16)
	kernrand.Fill(b)
	return hex.EncodeToString(b)
}

// waitReadable returns true once one of the listening sockets has a
// connection waiting, false when done closes first. A pipe wakes the poll
// when done closes (portable: macOS has no eventfd).
func waitReadable(files []*os.File, done <-chan struct{}) bool {
	r, w, err := os.Pipe()
	if err != nil {
		return true
	}
	defer r.Close()
	defer w.Close()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-done:
			w.Write([]byte{1})
		case <-stop:
		}
	}()
	fds := []unix.PollFd{{Fd: int32(r.Fd()), Events: unix.POLLIN}}
	for _, f := range files {
		fds = append(fds, unix.PollFd{Fd: int32(f.Fd()), Events: unix.POLLIN})
	}
	for {
		_, err := unix.Poll(fds, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil || fds[0].Revents != 0 {
			return false
		}
		return true
	}
}

// hostProxy is srt's proxy on the host's loopback for one command: its
// listeners, on ports chosen for the run, and the proxy part of its plan
// (the ports, the attribution user and the token the proxy variables
// carry: plan.Resolve makes the variables of it).
type hostProxy struct {
	files []*os.File
	ports proxyPorts
	proxy *plan.Proxy
}

// newHostProxy listens for the proxies of the command whose attribution
// key is key; token is the proxies' credential ("" for none).
func newHostProxy(key, token string) (*hostProxy, error) {
	files, ports, err := hostListeners()
	if err != nil {
		return nil, err
	}
	return hostProxyOn(files, ports, key, token), nil
}

// hostProxyOn is newHostProxy on listeners made already.
func hostProxyOn(files []*os.File, ports proxyPorts, key, token string) *hostProxy {
	return &hostProxy{files: files, ports: ports,
		proxy: &plan.Proxy{HTTPPort: ports.http, SOCKSPort: ports.socks, User: srtlink.UserFor(key), Token: token}}
}

// closeListeners closes srt's copies of the listeners.
func (h *hostProxy) closeListeners() {
	for _, f := range h.files {
		f.Close()
	}
	h.files = nil
}

// egressSettings is the part of the egress's configuration the settings
// decide alone; the Manager (egressConfig) and hostEgress add theirs.
func egressSettings(cfg *settings.Config) egress.Config {
	parent := parentProxy(cfg)
	ec := egress.Config{
		ParentHTTP: parent.HTTP, ParentHTTPS: parent.HTTPS, NoProxy: parent.NoProxy,
		// Inside another srt's Landlock sandbox the parent from the
		// environment is the outer srt's proxy: every request goes
		// there, loopback and NO_PROXY's too, so that the outer rules
		// judge each (the outer domain lets this srt's own connects
		// reach only the outer's ports and the loopback ports its
		// rules name, where the outer's decider would not be asked).
		ParentAll: cfg.Network.ParentProxy == nil && insideLandlockSrt() && (parent.HTTP != "" || parent.HTTPS != ""),
		Network:   networkOf(cfg), Rules: rulesOf(&cfg.Network),
		Scrub:           scrubbedVars(&cfg.Credentials),
		PlaintextInject: cfg.Credentials.AllowPlaintextInject,
	}
	if s := cfg.Credentials.SigV4; s != nil {
		ec.SigV4Streaming, ec.SigV4Presigned, ec.SigV4A = s.Streaming, s.Presigned, s.SigV4A
	}
	// srt-proxy ignores it when it only relays (Config.RelayOnly).
	if mp := cfg.Network.MitmProxy; mp != nil {
		ec.MITM = mitmFlags(mp)
	}
	return ec
}

// hostEgress is the egress of one command outside the Manager (macOS):
// the decider and srt-proxy serving a hostProxy's listeners, started at
// the first connection the command makes (as the Manager's), and stopped
// by Close.
type hostEgress struct {
	*hostProxy
	opts hostEgressOptions
	done chan struct{} // closed by Close
	wg   sync.WaitGroup
	// eg is the running egress, once started (set before wg is done).
	eg *egress.Egress
}

// hostEgressOptions say how a hostEgress runs, and where its refusals go.
type hostEgressOptions struct {
	Config *settings.Config
	// Key is the command's attribution key, Text what violations report
	// as the command.
	Key, Text string
	// DeciderExecutable and ProxyExecutable as Options's.
	DeciderExecutable, ProxyExecutable string
	Warnings                           io.Writer
	Debug                              bool
	Violations                         *ViolationStore
	OnViolation                        func(Violation)
}

// startHostEgress listens for the command's proxies and, in the
// background, starts the egress once a connection waits. The programs are
// found and checked now: a missing srt-proxy is an error before the
// command runs.
func startHostEgress(o hostEgressOptions) (*hostEgress, error) {
	decider, err := startProgram(o.DeciderExecutable, "decider", "DeciderExecutable")
	if err != nil {
		return nil, err
	}
	proxy, err := startProgram(o.ProxyExecutable, "srt-proxy", "ProxyExecutable")
	if err != nil {
		return nil, err
	}
	hp, err := newHostProxy(o.Key, newToken())
	if err != nil {
		return nil, err
	}
	h := &hostEgress{hostProxy: hp, opts: o, done: make(chan struct{})}
	ec := egressSettings(o.Config)
	ec.DeciderPath, ec.ProxyPath, ec.Token = decider, proxy, hp.proxy.Token
	ec.Debug, ec.Stderr = o.Debug, o.Warnings
	ec.OnViolation = h.violation
	start := func() error {
		defer h.closeListeners() // srt-proxy has its own copies
		eg, err := egress.Start(ec)
		if err != nil {
			return startError(err)
		}
		if err := eg.AddListeners(o.Key, h.files); err != nil {
			eg.Close()
			return err
		}
		h.eg = eg
		return nil
	}
	if ec.MITM != nil {
		// Now, as the Manager does: a socketPath that is there but is no
		// socket is a settings error before the command runs.
		if err := start(); err != nil {
			return nil, err
		}
		return h, nil
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		if !waitReadable(h.files, h.done) {
			h.closeListeners()
			return
		}
		if err := start(); err != nil {
			fmt.Fprintf(o.Warnings, "srt: the network proxy could not start, so the sandbox has no network: %v\n", err)
		}
	}()
	return h, nil
}

// violation records a refusal of the decider.
func (h *hostEgress) violation(line, user string) {
	if Ignored(h.opts.Config.IgnoreViolations, line, h.opts.Text) {
		return
	}
	v := Violation{Line: line, Command: h.opts.Text, Key: srtlink.UserLabel(user), Time: time.Now()}
	if h.opts.Violations != nil {
		h.opts.Violations.Add(v)
	}
	if h.opts.OnViolation != nil {
		h.opts.OnViolation(v)
	}
}

// Close records the refusals still on their way and stops the egress (if
// it started).
func (h *hostEgress) Close() {
	close(h.done)
	h.wg.Wait()
	if h.eg != nil {
		h.eg.Sync(2 * time.Second)
		h.eg.Close()
	}
}

// startError turns srt-proxy's account of a failed start into srt's
// error: a settings error (ErrInvalidConfig, naming the key) when the
// settings caused it, as a bad caCertPath/caKeyPath pair does.
func startError(err error) error {
	var se *egress.StartError
	if errors.As(err, &se) && se.Setting != "" {
		return &settings.InvalidError{Issues: []settings.Issue{{Path: "network." + se.Setting, Message: se.Msg}}}
	}
	return err
}

// mitmFlags is network.mitmProxy for srt-proxy: the socket's path made
// absolute (from srt's working directory, as tlsTerminate's paths are)
// and the domains as written.
func mitmFlags(mp *settings.MitmProxy) *srtlink.MITM {
	f := &srtlink.MITM{Socket: mp.SocketPath}
	if a, err := filepath.Abs(mp.SocketPath); err == nil {
		f.Socket = a
	}
	for _, p := range mp.Domains {
		f.Domains = append(f.Domains, p.String())
	}
	return f
}
