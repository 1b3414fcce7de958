//go:build linux

package main

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/srt-sandbox/decider/protocol"
	"github.com/srt-sandbox/decider/srtlink"
)

// srtModeProxy starts srt-proxy in srt's mode with args added, answers
// the hello as srt's decider would (unless the proxy fails first) and
// returns the first line srt-proxy sends back on the control channel.
func srtModeProxy(t *testing.T, args ...string) (srtlink.Message, *proc) {
	t.Helper()
	line, p := srtModeProxyLine(t, args...)
	m, err := srtlink.Decode([]byte(strings.TrimSuffix(line, "\n")))
	if err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	return m, p
}

// srtModeProxyLine is srtModeProxy's line as it came, with its newline.
func srtModeProxyLine(t *testing.T, args ...string) (string, *proc) {
	t.Helper()
	decMine, decTheirs := socketPair(t)
	ctlMine, ctlTheirs := socketPair(t)
	p := spawn(t, append([]string{"--srt-mode", "--decider-fd", "3", "--control-fd", "4"}, args...),
		[]*os.File{decTheirs, ctlTheirs}, []string{"SRT_PROXY_TOKEN=" + testToken})
	decTheirs.Close()
	ctlTheirs.Close()
	go func() {
		d := &decider{t: t, r: protocol.NewReader(decMine, protocol.Line, protocol.MaxProxyFrame), w: protocol.NewWriter(decMine, protocol.Line), c: decMine}
		if _, err := d.r.Read(); err == nil {
			d.sendRaw(frameBytes(protocol.Line, `{"t":"hello","proto":1,"allowedDomains":[],"deniedDomains":[],"ext":["srt.v1"]}`))
		}
	}()
	ctlMine.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(ctlMine).ReadString('\n')
	if err != nil {
		t.Fatalf("no line from srt-proxy on the control channel: %v", err)
	}
	return line, p
}

const testToken = "0123456789abcdef0123456789abcdef"

// srtModeServing starts srt-proxy in srt's mode with args added, answers
// its hello as srt's decider would (with srt.v1) and returns the decider's
// end and the handoff channel once srt-proxy said ready.
func srtModeServing(t *testing.T, args ...string) (*decider, *net.UnixConn, *proc) {
	t.Helper()
	decMine, decTheirs := socketPair(t)
	ctlMine, ctlTheirs := socketPair(t)
	p := spawn(t, append([]string{"--srt-mode", "--decider-fd", "3", "--control-fd", "4"}, args...),
		[]*os.File{decTheirs, ctlTheirs}, []string{srtlink.TokenEnv + "=" + testToken})
	decTheirs.Close()
	ctlTheirs.Close()
	d := &decider{t: t, r: protocol.NewReader(decMine, protocol.Line, protocol.MaxProxyFrame), w: protocol.NewWriter(decMine, protocol.Line), c: decMine}
	d.next()
	d.sendRaw(frameBytes(protocol.Line, `{"t":"hello","proto":1,"allowedDomains":[],"deniedDomains":[],"ext":["srt.v1"]}`))
	return d, awaitReady(t, ctlMine), p
}

// handListener hands srt-proxy a fresh loopback listener as sandbox id's
// proxy listener, and returns its address.
func handListener(t *testing.T, ctl *net.UnixConn, id string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lf, _ := l.(*net.TCPListener).File()
	if err := srtlink.Send(ctl, srtlink.Message{T: srtlink.TListen, ID: id}, []*os.File{lf}); err != nil {
		t.Fatal(err)
	}
	lf.Close()
	addr := l.Addr().String()
	l.Close() // srt-proxy holds its own copy
	return addr
}

// In srt's mode srt-proxy says "ready" once it serves, having written the
// trust bundle: the CA it made first, then the host's roots and the extra
// certificates.
func TestSRTModeReadyWithBundle(t *testing.T) {
	dir := t.TempDir()
	extra := filepath.Join(dir, "extra.pem")
	caPEM := testCA(t)
	os.WriteFile(extra, caPEM, 0o600) // a key and a certificate: only the certificate is taken
	bundle := filepath.Join(dir, "trust-bundle.crt")
	m, _ := srtModeProxy(t, "--tls-terminate", "--tls-bundle-out", bundle, "--tls-extra-ca", extra,
		"--tls-extra-ca", filepath.Join(dir, "missing.pem"), "--tls-exclude", "*.pinned.test", "--max-tunnels", "4",
		"--handshake-timeout", "2s", "--refuse-opaque-tunnels", "--require-host-match", "--ambiguous-target", "normalize",
		"--strip-response-header", "x-secret")
	if m.T != "ready" {
		t.Fatalf("srt-proxy said %+v", m)
	}
	b, err := os.ReadFile(bundle)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(bundle); fi.Mode().Perm() != 0o644 {
		t.Errorf("bundle mode %v", fi.Mode())
	}
	if bytes.Contains(b, []byte("PRIVATE KEY")) || !bytes.Contains(b, caPEM[bytes.Index(caPEM, []byte("-----BEGIN CERTIFICATE")):]) {
		t.Errorf("bundle lacks the extra certificate or holds a key")
	}
	if n := bytes.Count(b, []byte("BEGIN CERTIFICATE")); n < 2 {
		t.Errorf("bundle of %d certificates", n)
	}
}

// A CA that cannot be used is a settings error srt reports, naming
// tlsTerminate; srt-proxy then stops.
func TestSRTModeFailedCA(t *testing.T) {
	dir := t.TempDir()
	pem := testCA(t)
	keyOnly := filepath.Join(dir, "key.pem")
	os.WriteFile(keyOnly, pem[:bytes.Index(pem, []byte("-----BEGIN CERTIFICATE"))], 0o600)
	both := filepath.Join(dir, "both.pem")
	os.WriteFile(both, pem, 0o600)
	other := filepath.Join(dir, "other.pem")
	os.WriteFile(other, testCA(t), 0o600)
	for _, c := range []struct {
		name, cert, key, want string
	}{
		{"missing cert", filepath.Join(dir, "nope.pem"), both, "tlsTerminate: caCertPath cannot be read: open " + filepath.Join(dir, "nope.pem") + ": no such file or directory"},
		{"no certificate", keyOnly, keyOnly, "tlsTerminate: the CA certificate PEM holds no CERTIFICATE block"},
		{"mismatched", both, other, "tlsTerminate: the CA key does not match the CA certificate"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, p := srtModeProxy(t, "--tls-terminate", "--tls-ca-cert", c.cert, "--tls-ca-key", c.key, "--tls-bundle-out", filepath.Join(dir, "b.crt"))
			if m.T != "failed" || m.Setting != "tlsTerminate" || m.Error != c.want {
				t.Errorf("srt-proxy said %+v, want the error %q", m, c.want)
			}
			p.exit()
			if _, err := os.Stat(filepath.Join(dir, "b.crt")); err == nil {
				t.Error("a bundle was written")
			}
		})
	}
}

// The options of srt's mode are refused without it, and TLS options
// without --tls-terminate.
func TestSRTModeOptionErrors(t *testing.T) {
	r, w, _ := os.Pipe()
	defer r.Close()
	defer w.Close()
	for args, want := range map[string]string{
		"--decider-fd 3 --listen 127.0.0.1:0 --tls-terminate":                      "srt proxy: --tls-terminate is an option of srt's mode (--srt-mode); proxy-only mode's policy is fixed\n" + usageHint,
		"--srt-mode --decider-fd 3 --control-fd 3 --tls-ca-cert x":                 "srt-proxy: --tls-ca-cert needs --tls-terminate",
		"--srt-mode --decider-fd 3 --control-fd 3 --metrics-listen 127.0.0.1:0":    "srt-proxy: --metrics-listen is an option of proxy-only mode (srt proxy); srt's mode has no metrics",
		"--srt-mode --decider-fd 3 --control-fd 3 --listen 127.0.0.1:0":            "srt-proxy: --listen is an option of proxy-only mode (srt proxy); srt's mode (--srt-mode) takes no such option",
		"--srt-mode --control-fd 3 --decider-in 3 --decider-out 3":                 "srt-proxy: --decider-in is an option of proxy-only mode (srt proxy); srt's mode (--srt-mode) takes no such option",
		"--srt-mode --decider-fd 3 --control-fd 3 --ambiguous-target x":            `srt-proxy: --ambiguous-target must be refuse, asSpelled or normalize (got "x")`,
		"--srt-mode --decider-fd 3 --control-fd 3 --tls-terminate --tls-ca-key k":  "srt-proxy: --tls-ca-cert and --tls-ca-key must be given together",
		"--srt-mode --decider-fd 3 --control-fd 3 --tls-terminate --max-tunnels 0": "srt-proxy: --max-tunnels must be 1 to 65536",
	} {
		p := spawn(t, strings.Fields(args), []*os.File{r}, nil)
		if code, rest := p.exit(); code != exitUsage || rest != want {
			t.Errorf("%s: exit %d, stderr %q; want %q", args, code, rest, want)
		}
	}
}

// Once ready, srt's mode serves the listeners it is handed with the
// rules: a SOCKS5 CONNECT under --refuse-opaque-tunnels is refused with
// reply 0x01 after the decider allowed it.
func TestSRTModeRefusesSOCKS(t *testing.T) {
	d, ctl, _ := srtModeServing(t, "--refuse-opaque-tunnels")
	addr := handListener(t, ctl, "s")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	var hs bytes.Buffer
	hs.Write([]byte{5, 1, 2, 1, 3})
	hs.WriteString("srt")
	hs.WriteByte(byte(len(testToken)))
	hs.WriteString(testToken)
	hs.Write([]byte{5, 1, 0, 3, 6})
	hs.WriteString("x.test")
	hs.Write([]byte{1, 187})
	c.Write(hs.Bytes())
	id, req := nextReqExt(t, d)
	if req.Host != "x.test" || req.Kind != protocol.KindSOCKS {
		t.Errorf("asked %+v", req)
	}
	d.send(verdict(id, `"action":"allow"`))
	reply := make([]byte, 14)
	if _, err := io.ReadFull(c, reply); err != nil || reply[5] != 0x01 {
		t.Errorf("SOCKS reply % x (%v), want code 0x01", reply, err)
	}
	refused := string(d.next())
	if !strings.Contains(refused, `"t":"refused"`) || !strings.Contains(refused, `"reason":"refuseOpaqueTunnels"`) {
		t.Errorf("decider told %s", refused)
	}
}
