//go:build linux

package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/srt-sandbox/decider/protocol"
)

// testCA makes a CA and returns its PEM (key and certificate).
func testCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "srt-proxy test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalPKCS8PrivateKey(key)
	return append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
}

// startTerminating runs srt-proxy with a test CA on --ca-fd (and args),
// answers its hello and waits until it serves; it returns curl's path and
// the CA's file, for curl --cacert.
func startTerminating(t *testing.T, args ...string) (p *proc, curl, caFile string) {
	t.Helper()
	return startTerminatingWith(t, defaultHello, nil, args...)
}

// startTerminatingWith is startTerminating with the decider's hello and
// the proxy's environment given.
func startTerminatingWith(t *testing.T, hello string, env []string, args ...string) (p *proc, curl, caFile string) {
	t.Helper()
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatal("curl is needed for this test (scripts/test installs it)")
	}
	caPEM := testCA(t)
	caFile = filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(caFile, caPEM, 0o600)
	caR, caW, _ := os.Pipe()
	caW.Write(caPEM)
	caW.Close()
	mine, theirs := socketPair(t)
	p = spawn(t, append([]string{"--listen", "127.0.0.1:0", "--decider-fd", "3", "--ca-fd", "4"}, args...), []*os.File{theirs, caR}, env)
	theirs.Close()
	caR.Close()
	p.dec = &decider{t: t, r: protocol.NewReader(mine, protocol.Line, protocol.MaxProxyFrame), w: protocol.NewWriter(mine, protocol.Line), c: mine}
	p.dec.next()
	p.dec.send(hello)
	p.serving()
	return p, curl, caFile
}

// With --ca-fd a CONNECT that passes the gate is TLS-terminated and each
// request inside goes to the decider, with the TLS server name.
func TestTerminatedRequests(t *testing.T) {
	p, curl, caFile := startTerminating(t)

	out := async(func() string {
		b, _ := exec.Command(curl, "-sS", "-i", "--max-time", "10", "--cacert", caFile, "-x", "http://"+p.addr, "https://allowed.test/in?x=1").CombinedOutput()
		return string(b)
	})
	id, req := p.dec.nextReq()
	if req.Host != "allowed.test" || req.Port != 443 || req.SNI == nil || *req.SNI != "allowed.test" || req.Path != "/in" || *req.Query != "x=1" {
		t.Errorf("decider saw %+v", req)
	}
	p.dec.send(verdict(id, `"action":"deny","status":451,"reason":"not here"`))
	got := await(t, out)
	for _, want := range []string{"HTTP/1.1 451 Unavailable For Legal Reasons\r\n", "X-Deny-Reason: decider\r\n", "\r\n\r\nnot here\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("curl got %q, lacking %q", got, want)
		}
	}
	// Not on the allow list: refused at the CONNECT, the decider not asked.
	b, _ := exec.Command(curl, "-sS", "--max-time", "10", "--cacert", caFile, "-x", "http://"+p.addr, "https://notallowed.test/").CombinedOutput()
	if !strings.Contains(string(b), "403") {
		t.Errorf("curl got %q", b)
	}
}
