//go:build linux

package main

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/srt-sandbox/decider/protocol"

	"github.com/srt-sandbox/srt-proxy/internal/testcert"
)

// TestMaskedSecretsThroughTheBinary: srt-proxy alone (-d), a decider that
// took srt.mask.v1 gives it a masked secret and names it in the allow of
// one request curl sends through a terminated tunnel: the HTTPS upstream
// receives the value in the header and the body; curl's sentinel that no
// allow names goes as it is; the decision line says "injected" and no
// line holds the value.
func TestMaskedSecretsThroughTheBinary(t *testing.T) {
	const sentinel, value = "fake_value_3e1f5a7c-9b2d-4e6f-8a1c-3d5e7f9a1b2c", "ghp_THEREALTOKEN0123456789"
	const other = "fake_value_aaaabbbb-cccc-4ddd-8eee-ffff00001111"
	ca, err := testcert.New()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ca.Server("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var gotAuth, gotOther, gotBody string
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		gotAuth, gotOther, gotBody = r.Header.Get("Authorization"), r.Header.Get("X-Other"), string(b)
		mu.Unlock()
		io.WriteString(w, "upstream ok")
	}))
	up.TLS = cfg
	up.StartTLS()
	defer up.Close()
	upCA := filepath.Join(t.TempDir(), "upstream-ca.pem")
	os.WriteFile(upCA, ca.PEM, 0o600)

	hello := `{"t":"hello","proto":1,"allowedDomains":["127.0.0.1"],"deniedDomains":[],"ext":["srt.v1","` + protocol.ExtMaskV1 + `"]}`
	p, curl, caFile := startTerminatingWith(t, hello, []string{"SSL_CERT_FILE=" + upCA}, "-d")
	masks, err := protocol.Encode(&protocol.Masks{Masks: []protocol.Mask{{ID: "cmd.0", Sentinel: sentinel, Value: value}}})
	if err != nil {
		t.Fatal(err)
	}
	p.dec.send(string(masks))
	_, port, _ := net.SplitHostPort(up.Listener.Addr().String())
	out := async(func() string {
		b, _ := exec.Command(curl, "-sS", "--max-time", "10", "--cacert", caFile, "-x", "http://"+p.addr,
			"-H", "Authorization: Bearer "+sentinel, "-H", "X-Other: "+other, "--data-binary", "token="+sentinel,
			"https://127.0.0.1:"+port+"/p").CombinedOutput()
		return string(b)
	})
	id, _ := nextReqExt(t, p.dec)
	p.dec.send(verdict(id, `"action":"allow","inject":["cmd.0"]`))
	if got := await(t, out); got != "upstream ok" {
		t.Fatalf("curl: %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if gotAuth != "Bearer "+value || gotBody != "token="+value || gotOther != other {
		t.Errorf("the upstream received Authorization %q, X-Other %q, body %q", gotAuth, gotOther, gotBody)
	}
	var lines []string
	for {
		l := p.line()
		lines = append(lines, l)
		if strings.Contains(l, "decision=allow") && strings.Contains(l, "kind=https") {
			break
		}
		if len(lines) > 20 {
			t.Fatalf("no decision line for the request: %q", lines)
		}
	}
	for _, l := range lines {
		if strings.Contains(l, value) {
			t.Errorf("a line holds the value: %q", l)
		}
	}
	if l := lines[len(lines)-1]; !strings.Contains(l, "inject=injected") {
		t.Errorf("decision line %q", l)
	}
}
