//go:build linux

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/srt-sandbox/decider/protocol"
)

// The black-box tests run the built srt-proxy binary on real sockets, a
// decider driven from the test at the other end of a socket pair (or a
// pair of pipes).

var binary string // the srt-proxy built for the tests

func TestMain(m *testing.M) {
	if spec := os.Getenv(sandboxNSEnv); spec != "" {
		os.Exit(sandboxNSHelper(spec)) // capture_ns_test.go: the test binary as a namespace's set-up
	}
	dir, err := os.MkdirTemp("", "srt-proxy-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "srt-proxy")
	build := exec.Command("go", "build", "-tags=urfave_cli_no_docs", "-o", binary, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building srt-proxy:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var framings = []protocol.Framing{protocol.Line, protocol.Length}

const defaultHello = `{"t":"hello","proto":1,"allowedDomains":["allowed.test","127.0.0.1","*.wild.test"],"deniedDomains":["denied.allowed.test"]}`

// proc is a running srt-proxy.
type proc struct {
	t     *testing.T
	cmd   *exec.Cmd
	lines chan string // stderr, line by line
	dec   *decider    // nil when the test wires the decider itself
	addr  string      // the --listen address, once serving
	done  chan struct{}
	code  int
}

// decider is the test's end of the decider stream.
type decider struct {
	t *testing.T
	r *protocol.Reader
	w *protocol.Writer
	c io.Closer
}

func (d *decider) send(msgs ...string) {
	d.t.Helper()
	for _, m := range msgs {
		if err := d.w.Write([]byte(m)); err != nil {
			d.t.Fatalf("decider write %q: %v", m, err)
		}
	}
}

// sendRaw writes bytes as they are, no framing.
func (d *decider) sendRaw(b []byte) {
	d.t.Helper()
	if _, err := d.c.(io.Writer).Write(b); err != nil {
		d.t.Fatalf("decider write: %v", err)
	}
}

// next is the next message from the proxy, raw.
func (d *decider) next() []byte {
	d.t.Helper()
	type res struct {
		b   []byte
		err error
	}
	ch := make(chan res, 1)
	go func() {
		b, err := d.r.Read()
		ch <- res{b, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			d.t.Fatalf("decider read: %v", r.err)
		}
		return r.b
	case <-time.After(10 * time.Second):
		d.t.Fatal("no message from the proxy")
	}
	return nil
}

// nextReq is the next req; it returns its id.
func (d *decider) nextReq() (uint64, *protocol.Req) {
	d.t.Helper()
	b := d.next()
	m, err := protocol.DecodeProxyMessage(b, false)
	if err != nil {
		d.t.Fatalf("proxy sent %q: %v", b, err)
	}
	r, ok := m.(*protocol.Req)
	if !ok {
		d.t.Fatalf("proxy sent %q, want a req", b)
	}
	return r.ID, r
}

func verdict(id uint64, rest string) string {
	return `{"t":"verdict","id":` + strconv.FormatUint(id, 10) + `,` + rest + `}`
}

// socketPair returns two connected Unix stream sockets as files.
func socketPair(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|sockCloexec, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, b := os.NewFile(uintptr(fds[0]), "a"), os.NewFile(uintptr(fds[1]), "b")
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// spawn starts srt-proxy with args; files become fds 3, 4, … in order.
func spawn(t *testing.T, args []string, files []*os.File, env []string) *proc {
	t.Helper()
	p := &proc{t: t, lines: make(chan string, 256), done: make(chan struct{})}
	p.cmd = exec.Command(binary, args...)
	p.cmd.ExtraFiles = files
	p.cmd.Env = append(os.Environ(), env...)
	startProc(t, p)
	return p
}

// spawnWithHosts is spawn in a mount namespace of the proxy's own, where
// hosts is bound over /etc/hosts; the machine's file is not touched. Run
// by another user than root, the mount namespace belongs to a user
// namespace of srt-proxy's own (where it is root).
func spawnWithHosts(t *testing.T, hosts string, args []string, files []*os.File, env []string) *proc {
	t.Helper()
	f := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(f, []byte(hosts), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, lines: make(chan string, 256), done: make(chan struct{})}
	script := `mount --bind "$1" /etc/hosts && shift && exec "$0" "$@"`
	unshare := []string{"--mount", "--propagation", "private"}
	if os.Geteuid() != 0 {
		unshare = append([]string{"--user", "--map-root-user"}, unshare...)
	}
	p.cmd = exec.Command("unshare", append(append(unshare, "sh", "-c", script, binary, f), args...)...)
	p.cmd.ExtraFiles = files
	p.cmd.Env = append(os.Environ(), env...)
	startProc(t, p)
	return p
}

// line waits for the next stderr line.
func (p *proc) line() string {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.t.Fatal("srt-proxy closed stderr")
		}
		return l
	case <-time.After(10 * time.Second):
		p.t.Fatal("no line on stderr")
	}
	return ""
}

// expectLine waits for the next stderr line and checks it.
func (p *proc) expectLine(want string) {
	p.t.Helper()
	if got := p.line(); got != want {
		p.t.Fatalf("stderr %q, want %q", got, want)
	}
}

// exit waits for srt-proxy to end and returns its code and the rest of
// stderr.
func (p *proc) exit() (int, string) {
	p.t.Helper()
	return p.exitWithin(10 * time.Second)
}

// exitWithin is exit with a longer wait, for a test that moves much data
// before srt-proxy stops (a guard against a hang, not a speed check: on a
// loaded 2-core machine that takes many seconds).
func (p *proc) exitWithin(d time.Duration) (int, string) {
	p.t.Helper()
	var rest []string
	timeout := time.After(d)
	for {
		select {
		case l, ok := <-p.lines:
			if ok {
				rest = append(rest, l)
				continue
			}
			<-p.done
			return p.code, strings.Join(rest, "\n")
		case <-timeout:
			p.t.Fatal("srt-proxy did not exit")
		}
	}
}

// expectStop waits for "srt proxy: stopped (why)" and the exit code.
func (p *proc) expectStop(why string, code int) {
	p.t.Helper()
	got, rest := p.exit()
	if want := "srt proxy: stopped (" + why + ")"; rest != want || got != code {
		p.t.Fatalf("exit %d, stderr %q; want %d, %q", got, rest, code, want)
	}
}

type startOpts struct {
	framing protocol.Framing
	args    []string // besides --listen and the decider's
	hello   string   // the decider's hello; "" is defaultHello
	env     []string
	hosts   string // when set, the proxy sees this /etc/hosts (needs root)
}

// start runs srt-proxy on 127.0.0.1:0 with a decider on fd 3, answers its
// hello and waits until it serves.
func start(t *testing.T, o startOpts) *proc {
	t.Helper()
	p := startNoHello(t, o)
	hello := o.hello
	if hello == "" {
		hello = defaultHello
	}
	if got, want := string(p.dec.next()), proxyHello(o.framing); got != want {
		t.Fatalf("proxy hello %q, want %q", got, want)
	}
	p.dec.send(hello)
	p.serving()
	return p
}

// proxyHello is proxy-only mode's hello: in line framing it offers srt.v1
// and srt.mask.v1.
func proxyHello(f protocol.Framing) string {
	if f == protocol.Length {
		return `{"t":"hello","proto":1}`
	}
	return `{"t":"hello","proto":1,"ext":["srt.v1","srt.mask.v1"]}`
}

// serving waits for the "serving" line and records the address.
func (p *proc) serving() {
	p.t.Helper()
	l := p.line()
	addr, ok := strings.CutPrefix(l, "srt proxy: serving ")
	if !ok {
		p.t.Fatalf("stderr %q, want serving", l)
	}
	p.addr = addr
}

func startNoHello(t *testing.T, o startOpts) *proc {
	t.Helper()
	mine, theirs := socketPair(t)
	args := append([]string{"--listen", "127.0.0.1:0", "--decider-fd", "3", "--decider-framing", o.framing.String()}, o.args...)
	var p *proc
	if o.hosts != "" {
		p = spawnWithHosts(t, o.hosts, args, []*os.File{theirs}, o.env)
	} else {
		p = spawn(t, args, []*os.File{theirs}, o.env)
	}
	theirs.Close()
	p.dec = &decider{t: t, r: protocol.NewReader(mine, o.framing, protocol.MaxProxyFrame), w: protocol.NewWriter(mine, o.framing), c: mine}
	return p
}

// dial connects to the proxy.
func (p *proc) dial() net.Conn {
	p.t.Helper()
	c, err := net.Dial("tcp", p.addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() { c.Close() })
	return c
}

// readAnswer reads one response from br: the head, then Content-Length
// bytes, or everything up to the close when there is none. It returns the
// raw bytes.
func readAnswer(t *testing.T, c net.Conn, br *bufio.Reader) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(15 * time.Second))
	var head bytes.Buffer
	length := -1
	for {
		line, err := br.ReadString('\n')
		head.WriteString(line)
		if err != nil {
			return head.String() + "<" + err.Error() + ">"
		}
		if v, ok := strings.CutPrefix(strings.ToLower(line), "content-length: "); ok {
			length, _ = strconv.Atoi(strings.TrimSpace(v))
		}
		if line == "\r\n" {
			break
		}
	}
	if length < 0 {
		rest, _ := io.ReadAll(br)
		return head.String() + string(rest)
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(br, body); err != nil {
		return head.String() + string(body) + "<" + err.Error() + ">"
	}
	return head.String() + string(body)
}

// roundTrip sends raw on a new connection and reads one answer.
func (p *proc) roundTrip(raw string) string {
	p.t.Helper()
	c := p.dial()
	defer c.Close()
	if _, err := io.WriteString(c, raw); err != nil {
		p.t.Fatal(err)
	}
	return readAnswer(p.t, c, bufio.NewReader(c))
}

// async runs f in a goroutine; its result arrives on the channel.
func async(f func() string) <-chan string {
	ch := make(chan string, 1)
	go func() { ch <- f() }()
	return ch
}

func await(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(20 * time.Second):
		t.Fatal("no answer")
	}
	return ""
}

// refusal is the exact answer of a plain-HTTP refusal.
func refusal(status int, phrase, code, reason string, close bool) string {
	s := fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nX-Deny-Reason: %s\r\nContent-Length: %d\r\n", status, phrase, code, len(reason)+1)
	if close {
		s += "Connection: close\r\n"
	}
	return s + "\r\n" + reason + "\n"
}

// connectRefusal is the exact answer of a refused CONNECT (raw, closed).
func connectRefusal(status int, phrase, code, reason string) string {
	return fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nX-Deny-Reason: %s\r\n\r\n%s", status, phrase, code, reason)
}

// execShell is a command running script under sh, with binary as $0.
func execShell(script string, files []*os.File) *exec.Cmd {
	cmd := exec.Command("sh", "-c", script, binary)
	cmd.ExtraFiles = files
	cmd.Env = os.Environ()
	return cmd
}

// startProc starts p.cmd and collects its stderr and exit.
func startProc(t *testing.T, p *proc) {
	t.Helper()
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait closes the pipe: it comes after the last line is read.
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
		p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
}
