package initstage

import (
	"bytes"
	"errors"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
)

// NoNS is what the init stage applies when it runs as srt's child, with
// no namespace at all (the Landlock backend, docs/architecture.md): not
// as PID 1 of a sandbox, so it never kills by -1, and every rule that a
// mount or a namespace would make is Landlock's or seccomp's.
type NoNS struct {
	// On selects the mode.
	On bool
	// GrantsFD is a descriptor holding the filesystem grants
	// (EncodeGrants): Landlock's, computed by srt (package llrules).
	GrantsFD int
	// Reads restricts reads to the grants.
	Reads bool
	// ChainFD is a descriptor holding the chain directories
	// (EncodeChains): the writable directories with a write-protected path
	// beneath, whose entries the init stage's supervisor makes, removes
	// and renames for the command (chain_linux.go). 0: none.
	ChainFD int
	// Net restricts TCP to ConnectPorts and BindPorts (Landlock ABI 4).
	Net          bool
	ConnectPorts []int
	BindPorts    []int
	// ConnectTo are the only TCP destinations the command's connect(2)
	// may reach (srt's proxies, the spare listeners, allowedDomains'
	// loopback entries), enforced by the init stage's supervisor on the
	// command's socket itself (netgate_linux.go): Landlock's rules know
	// ports and not addresses. The supervisor also refuses listen(2) on
	// a socket that has no port, which the kernel would bind to any
	// without asking Landlock. Empty with On: no TCP destination at all.
	ConnectTo []netip.AddrPort
	// NestedTo are the only destinations (of ConnectTo) of a process
	// with seccomp filters of its own, an srt inside's command: the
	// spare listeners (netgate_linux.go).
	NestedTo []netip.AddrPort
	// InOuter: this srt runs inside an srt Landlock sandbox, whose init
	// stage's supervisor (the one a chain of filters may have) performs
	// the command's connects and listens, and holds a process with
	// filters of its own (this srt's command) to the spare listeners,
	// where this srt's proxies serve (the outer NestedTo).
	InOuter bool
	// ScopeSignals refuses signals to processes outside the sandbox
	// (Landlock ABI 6).
	ScopeSignals bool
	// InetTCPOnly refuses, by seccomp, every socket but TCP (UDP, raw,
	// packet, ...): no network namespace keeps them in.
	InetTCPOnly bool
	// Listeners are srt's spare listening sockets on 127.0.0.1, which
	// the command gets at the numbers To (named in ListenersVar) for an
	// srt inside to serve its proxies on (it cannot bind: Net). From is
	// the number the init stage inherits each at. Not checked as PassFDs
	// are: a TCP socket leads nowhere under Net, whose rules apply to
	// every connect and bind of the command's, on any socket.
	Listeners []PassFD
}

// ListenersVar names, in the command's environment, the descriptors of
// the spare listeners an srt Landlock sandbox gives the command
// (NoNS.Listeners), comma-separated: an srt inside takes them for its
// proxies (docs/architecture.md, "An srt inside an srt").
const ListenersVar = "SRT_LANDLOCK_LISTENERS"

// Grant rights, as EncodeGrants writes them (landlock.Rights' values).
const (
	GrantRead  byte = 1
	GrantList  byte = 2
	GrantWrite byte = 4
)

// Grant is one Landlock grant for the init stage.
type Grant struct {
	Path   string
	Rights byte
}

// EncodeGrants lays grants out as the init stage reads them: per grant a
// rights byte, the path, a NUL.
func EncodeGrants(gs []Grant) []byte {
	var b bytes.Buffer
	for _, g := range gs {
		b.WriteByte(g.Rights)
		b.WriteString(g.Path)
		b.WriteByte(0)
	}
	return b.Bytes()
}

// DecodeGrants reads what EncodeGrants wrote.
func DecodeGrants(data []byte) ([]Grant, error) {
	if len(data) > maxRulesSize {
		return nil, errors.New("landlock grants: bad size")
	}
	var out []Grant
	for rest := data; len(rest) > 0; {
		end := bytes.IndexByte(rest, 0)
		if end < 2 || rest[0] == 0 || rest[0]&^(GrantRead|GrantList|GrantWrite) != 0 || rest[1] != '/' {
			return nil, errors.New("landlock grants: bad entry")
		}
		out = append(out, Grant{Rights: rest[0], Path: filepath.Clean(string(rest[1:end]))})
		rest = rest[end+1:]
	}
	return out, nil
}

// Chain is a directory whose entries the supervisor changes for the
// command, but for the protected names (llrules.Chain); or, with Reads, a
// writable directory whose entries it opens for reading, but for the
// hidden names.
type Chain struct {
	Path      string
	Protected []string
	Reads     bool
}

// EncodeChains lays chains out as the init stage reads them: per chain
// 'C' (or 'R', with Reads), its path and a NUL, then per protected name
// 'N', the name and a NUL.
func EncodeChains(cs []Chain) []byte {
	var b bytes.Buffer
	for _, c := range cs {
		if c.Reads {
			b.WriteByte('R')
		} else {
			b.WriteByte('C')
		}
		b.WriteString(c.Path)
		b.WriteByte(0)
		for _, n := range c.Protected {
			b.WriteByte('N')
			b.WriteString(n)
			b.WriteByte(0)
		}
	}
	return b.Bytes()
}

// DecodeChains reads what EncodeChains wrote. A path is absolute and
// clean; a name is one component (no slash, not "." or "..").
func DecodeChains(data []byte) ([]Chain, error) {
	if len(data) > maxRulesSize {
		return nil, errors.New("chain directories: bad size")
	}
	var out []Chain
	for rest := data; len(rest) > 0; {
		end := bytes.IndexByte(rest, 0)
		if end < 2 {
			return nil, errors.New("chain directories: bad entry")
		}
		v := string(rest[1:end])
		switch {
		case (rest[0] == 'C' || rest[0] == 'R') && v[0] == '/' && filepath.Clean(v) == v:
			out = append(out, Chain{Path: v, Reads: rest[0] == 'R'})
		case rest[0] == 'N' && len(out) > 0 && v != "." && v != ".." && !strings.Contains(v, "/"):
			out[len(out)-1].Protected = append(out[len(out)-1].Protected, v)
		default:
			return nil, errors.New("chain directories: bad entry")
		}
		rest = rest[end+1:]
	}
	return out, nil
}

// args are n's words of the init stage's argv.
func (n NoNS) args() []string {
	if !n.On {
		return nil
	}
	a := []string{"-no-namespaces"}
	if n.GrantsFD > 0 {
		a = append(a, "-grants-fd", strconv.Itoa(n.GrantsFD))
	}
	if n.Reads {
		a = append(a, "-grant-reads")
	}
	if n.ChainFD > 0 {
		a = append(a, "-chains-fd", strconv.Itoa(n.ChainFD))
	}
	if n.Net {
		a = append(a, "-tcp-rules")
	}
	for _, p := range n.ConnectPorts {
		a = append(a, "-tcp-connect", strconv.Itoa(p))
	}
	for _, p := range n.BindPorts {
		a = append(a, "-tcp-bind", strconv.Itoa(p))
	}
	for _, ap := range n.ConnectTo {
		a = append(a, "-tcp-connect-to", ap.String())
	}
	for _, ap := range n.NestedTo {
		a = append(a, "-tcp-connect-nested", ap.String())
	}
	if n.ScopeSignals {
		a = append(a, "-scope-signals")
	}
	if n.InetTCPOnly {
		a = append(a, "-tcp-only")
	}
	if n.InOuter {
		a = append(a, "-in-outer")
	}
	for _, l := range n.Listeners {
		a = append(a, "-listener-fd", strconv.Itoa(l.From)+":"+strconv.Itoa(l.To))
	}
	return a
}

// parse reads one of n's words at args[i]; it returns how many words it
// took (0: not one of n's).
func (n *NoNS) parse(args []string, i int) (int, error) {
	value := func() (int, error) {
		if i+1 == len(args) {
			return 0, errors.New(args[i] + " needs a value")
		}
		v, err := strconv.Atoi(args[i+1])
		if err != nil || v < 0 || v > 65535 {
			return 0, errors.New("bad " + args[i] + " " + strconv.Quote(args[i+1]))
		}
		return v, nil
	}
	switch args[i] {
	case "-no-namespaces":
		n.On = true
	case "-grant-reads":
		n.Reads = true
	case "-tcp-rules":
		n.Net = true
	case "-scope-signals":
		n.ScopeSignals = true
	case "-tcp-only":
		n.InetTCPOnly = true
	case "-in-outer":
		n.InOuter = true
	case "-tcp-connect-to", "-tcp-connect-nested":
		if i+1 == len(args) {
			return 0, errors.New(args[i] + " needs a value")
		}
		ap, err := netip.ParseAddrPort(args[i+1])
		if err != nil || !ap.Addr().Unmap().IsLoopback() || ap.Port() == 0 {
			return 0, errors.New("bad " + args[i] + " " + strconv.Quote(args[i+1]))
		}
		ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
		if args[i] == "-tcp-connect-to" {
			n.ConnectTo = append(n.ConnectTo, ap)
		} else {
			n.NestedTo = append(n.NestedTo, ap)
		}
		return 2, nil
	case "-listener-fd":
		if i+1 == len(args) {
			return 0, errors.New(args[i] + " needs a value")
		}
		from, to, ok := strings.Cut(args[i+1], ":")
		f, err1 := strconv.Atoi(from)
		t, err2 := strconv.Atoi(to)
		if !ok || err1 != nil || err2 != nil || f < 3 || t < 3 {
			return 0, errors.New("bad -listener-fd " + strconv.Quote(args[i+1]))
		}
		n.Listeners = append(n.Listeners, PassFD{From: f, To: t})
		return 2, nil
	case "-grants-fd", "-chains-fd", "-tcp-connect", "-tcp-bind":
		v, err := value()
		if err != nil {
			return 0, err
		}
		switch args[i] {
		case "-grants-fd":
			if v < 3 {
				return 0, errors.New("bad -grants-fd " + strconv.Quote(args[i+1]))
			}
			n.GrantsFD = v
		case "-chains-fd":
			if v < 3 {
				return 0, errors.New("bad -chains-fd " + strconv.Quote(args[i+1]))
			}
			n.ChainFD = v
		case "-tcp-connect":
			n.ConnectPorts = append(n.ConnectPorts, v)
		default:
			n.BindPorts = append(n.BindPorts, v)
		}
		return 2, nil
	default:
		return 0, nil
	}
	return 1, nil
}
