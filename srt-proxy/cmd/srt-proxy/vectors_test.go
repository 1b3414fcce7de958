//go:build linux

package main

import (
	"encoding/base64"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/srt-sandbox/decider/protocol"
	"github.com/srt-sandbox/decider/srtlink"
)

// The conformance vectors (shared/decider-protocol) of the to-proxy
// direction, run through the built srt-proxy as a black box: each
// decider→proxy message is fed to a live proxy, which must keep the link
// or die with the expected reason (shared/decider-protocol/README.md).

type vector struct {
	Name          string  `json:"name"`
	Dir           string  `json:"dir"`
	Ext           bool    `json:"ext"`
	Mask          bool    `json:"mask"`
	Message       *string `json:"message"`
	MessageBase64 *string `json:"messageBase64"`
	Expect        struct {
		OK     bool   `json:"ok"`
		T      string `json:"t"`
		Action string `json:"action"`
		ID     uint64 `json:"id"`
		Error  string `json:"error"`
	} `json:"expect"`
}

func (v vector) wire(t *testing.T) []byte {
	if v.Message != nil {
		return []byte(*v.Message)
	}
	b, err := base64.StdEncoding.DecodeString(*v.MessageBase64)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var isHello = regexp.MustCompile(`"t"\s*:\s*"hello"`)

func loadVectors(t *testing.T) []vector {
	t.Helper()
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.work above the test")
		}
		dir = parent
	}
	files, _ := filepath.Glob(filepath.Join(dir, "shared", "decider-protocol", "vectors", "*.json"))
	if len(files) == 0 {
		t.Fatal("no vectors")
	}
	var out []vector
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cases []vector
		if err := json.Unmarshal(data, &cases); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, c := range cases {
			if c.Dir == "to-proxy" {
				out = append(out, c)
			}
		}
	}
	return out
}

func TestVectorsProxyOnly(t *testing.T) {
	up := newUpstream(t, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
	request := "GET http://" + up.addr + "/ HTTP/1.1\r\nHost: " + up.addr + "\r\n\r\n"
	ran := 0
	for _, v := range loadVectors(t) {
		msg := v.wire(t)
		for _, f := range framings {
			if f == protocol.Line && (len(msg) == 0 || strings.ContainsAny(string(msg), "\n")) {
				continue // not one line (a blank line is a framing error); the length framing runs it
			}
			// In line framing the proxy offers srt.v1 (proxyHello): a
			// decider's hello there is judged as one answering the offer,
			// in length framing as one where none was made. The other
			// messages run with srt.v1 not in force (the test's hello
			// declines it); its messages run in TestVectorsSRTMode.
			if isHello.Match(msg) && v.Ext != (f == protocol.Line) || !isHello.Match(msg) && v.Ext {
				continue
			}
			// Where the proxy offers srt.v1 it offers srt.mask.v1 too: a
			// hello judged as answering srt.v1 alone cannot run.
			if notOffered(v, msg) {
				continue
			}
			ran++
			t.Run(v.Name+"/"+f.String(), func(t *testing.T) {
				t.Parallel()
				p := startNoHello(t, startOpts{framing: f, args: []string{"--plaintext-header-set"}})
				p.dec.next()
				if isHello.Match(msg) {
					p.dec.sendRaw(frameBytes(f, string(msg)))
					if v.Expect.Error != "" {
						p.expectStop("decider: "+v.Expect.Error, 0)
						return
					}
					p.serving()
					return
				}
				p.dec.send(`{"t":"hello","proto":1,"allowedDomains":["127.0.0.1"],"deniedDomains":[]}`)
				p.serving()
				got := async(func() string { return p.roundTrip(request) })
				if id, _ := p.dec.nextReq(); id != 1 {
					t.Fatalf("first id %d", id)
				}
				p.dec.sendRaw(frameBytes(f, string(msg)))
				switch {
				case v.Expect.Error != "":
					want := refusal(503, "Service Unavailable", "decider_unavailable", "request decider: "+v.Expect.Error, true)
					if ans := await(t, got); ans != want {
						t.Errorf("got  %q\nwant %q", ans, want)
					}
					p.expectStop("decider: "+v.Expect.Error, 0)
				case v.Expect.ID != 1:
					why := "verdict for id " + strconv.FormatUint(v.Expect.ID, 10) + ", which nothing waits on"
					if ans := await(t, got); !strings.HasSuffix(ans, "request decider: "+why+"\n") {
						t.Errorf("got %q", ans)
					}
					p.expectStop("decider: "+why, 0)
				default:
					if v.Expect.Action == protocol.ActionNeedBody {
						if body := nextBody(t, p.dec); len(body.Data) != 0 || body.Cut {
							t.Fatalf("body %+v", body)
						}
						p.dec.send(verdict(1, `"action":"allow"`))
					}
					ans := await(t, got)
					if strings.Contains(ans, "decider_unavailable") {
						t.Fatalf("got %q", ans)
					}
					if v.Expect.Action == protocol.ActionAllow {
						up.next(t)
					}
					// The link lives: the next request is asked about.
					got = async(func() string { return p.roundTrip(request) })
					if id, _ := p.dec.nextReq(); id != 2 {
						t.Fatalf("second id %d", id)
					}
					p.dec.send(verdict(2, `"action":"deny","status":403`))
					await(t, got)
				}
			})
		}
	}
	if ran < 400 {
		t.Errorf("ran %d vector cases", ran)
	}
}

// The srt.v1 vectors run in srt's mode (line framing, extension offered),
// which is where the extension lives: listeners come over the control
// channel, and a dead link refuses requests without stopping the proxy.
func TestVectorsSRTMode(t *testing.T) {
	const token = "0123456789abcdef"
	request := "GET http://127.0.0.1:9/ HTTP/1.1\r\nHost: 127.0.0.1:9\r\nProxy-Authorization: Basic " +
		base64.StdEncoding.EncodeToString([]byte("user:"+token)) + "\r\n\r\n"
	for _, v := range loadVectors(t) {
		msg := v.wire(t)
		if !v.Ext || notOffered(v, msg) {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			decMine, decTheirs := socketPair(t)
			ctlMine, ctlTheirs := socketPair(t)
			p := spawn(t, []string{"--srt-mode", "--debug", "--decider-fd", "3", "--control-fd", "4"},
				[]*os.File{decTheirs, ctlTheirs}, []string{"SRT_PROXY_TOKEN=" + token})
			decTheirs.Close()
			ctlTheirs.Close()
			d := &decider{t: t, r: protocol.NewReader(decMine, protocol.Line, protocol.MaxProxyFrame), w: protocol.NewWriter(decMine, protocol.Line), c: decMine}
			if got := string(d.next()); got != `{"t":"hello","proto":1,"ext":["srt.v1","srt.mask.v1"]}` {
				t.Fatalf("proxy hello %q", got)
			}
			hello := `{"t":"hello","proto":1,"allowedDomains":["127.0.0.1"],"deniedDomains":[],"ext":["srt.v1"]}`
			if v.Mask {
				hello = `{"t":"hello","proto":1,"allowedDomains":["127.0.0.1"],"deniedDomains":[],"ext":["srt.v1","srt.mask.v1"]}`
			}
			if isHello.Match(msg) {
				hello = string(msg)
			}
			d.sendRaw(frameBytes(protocol.Line, hello))
			if isHello.Match(msg) && v.Expect.Error != "" {
				code, rest := p.exit()
				if want := "srt-proxy: stopped (decider: " + v.Expect.Error + ")"; code != 0 || !strings.Contains(rest, want) {
					t.Fatalf("exit %d, stderr %q; want %q", code, rest, want)
				}
				return
			}
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			lf, _ := l.(*net.TCPListener).File()
			ctlConn, err := net.FileConn(ctlMine)
			if err != nil {
				t.Fatal(err)
			}
			if err := srtlink.Send(ctlConn.(*net.UnixConn), srtlink.Message{T: "listen", ID: "s"}, []*os.File{lf}); err != nil {
				t.Fatal(err)
			}
			lf.Close()
			p.addr = l.Addr().String()
			l.Close()
			time.Sleep(50 * time.Millisecond)
			got := async(func() string { return p.roundTrip(request) })
			id, _ := nextReqExt(t, d)
			if isHello.Match(msg) {
				d.send(verdict(id, `"action":"deny","status":403`))
				if ans := await(t, got); !strings.HasPrefix(ans, "HTTP/1.1 403 ") {
					t.Fatalf("got %q", ans)
				}
				return
			}
			if v.Mask && v.Expect.OK {
				// An allow's inject, or a drop, names masks the link
				// holds: give them.
				if ms := injectMasks(t, msg); ms != "" {
					d.send(ms)
				}
			}
			d.sendRaw(frameBytes(protocol.Line, string(msg)))
			if v.Expect.Error != "" {
				want := "request decider: " + v.Expect.Error + "\n"
				if ans := await(t, got); !strings.HasPrefix(ans, "HTTP/1.1 503 ") || !strings.HasSuffix(ans, want) {
					t.Errorf("got %q, want a 503 ending %q", ans, want)
				}
				return
			}
			// A verdict (for id 1, the request's) answers the request;
			// an update leaves the link alive and the request waiting.
			if v.Expect.T != "verdict" {
				d.send(verdict(id, `"action":"deny","status":403`))
			} else if id != 1 {
				t.Fatalf("request id %d; the vector's verdict is for id 1", id)
			}
			ans := await(t, got)
			if v.Mask && v.Expect.Action == protocol.ActionAllow && !strings.Contains(string(msg), "setHeaders") {
				// Allowed, with the masks it names: forwarded to the
				// closed port.
				if !strings.HasPrefix(ans, "HTTP/1.1 502 ") || !strings.Contains(ans, "upstream 127.0.0.1:9: connection refused") {
					t.Fatalf("got %q", ans)
				}
				return
			}
			if !strings.HasPrefix(ans, "HTTP/1.1 403 ") {
				t.Fatalf("got %q", ans)
			}
		})
	}
}

// notOffered: a decider hello accepting srt.mask.v1 that the vector judges
// as answering srt.v1 alone; srt-proxy offers both.
func notOffered(v vector, msg []byte) bool {
	return isHello.Match(msg) && !v.Mask && strings.Contains(string(msg), protocol.ExtMaskV1)
}

// injectMasks is a masks message giving the masks msg's inject or drop
// names, or "" when it names none.
func injectMasks(t *testing.T, msg []byte) string {
	var a struct {
		Inject []string `json:"inject"`
		Drop   []string `json:"drop"`
	}
	if err := json.Unmarshal(msg, &a); err != nil {
		t.Fatal(err)
	}
	ids := append(a.Inject, a.Drop...)
	if len(ids) == 0 {
		return ""
	}
	m := &protocol.Masks{}
	for i, id := range ids {
		m.Masks = append(m.Masks, protocol.Mask{ID: id, Sentinel: "fake_value_" + strconv.Itoa(1000000+i) + "_sentinel", Value: "v"})
	}
	b, err := protocol.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// nextReqExt reads a req under srt.v1.
func nextReqExt(t *testing.T, d *decider) (uint64, *protocol.Req) {
	t.Helper()
	b := d.next()
	m, err := protocol.DecodeProxyMessage(b, true)
	if err != nil { // the decider declined srt.v1
		m, err = protocol.DecodeProxyMessage(b, false)
	}
	if err != nil {
		t.Fatalf("%q: %v", b, err)
	}
	r, ok := m.(*protocol.Req)
	if !ok {
		t.Fatalf("proxy sent %q", b)
	}
	return r.ID, r
}
