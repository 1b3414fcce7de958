package dial

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/srt-sandbox/decider/hostname"
	"github.com/srt-sandbox/decider/policy"
)

// Dialer opens srt-proxy's outbound connections. Its fields are its
// dependencies; each nil field has a safe default, so the zero value dials
// directly with the system resolver and the built-in address rules.
type Dialer struct {
	// Resolve looks a host name up; nil means net.DefaultResolver.LookupNetIP.
	// It is called once per connection, with network "ip".
	Resolve func(ctx context.Context, network, host string) ([]netip.Addr, error)
	// Policy returns the resolved-address policy in force now (the lists
	// change while the proxy runs); nil, or a nil result, applies the
	// built-in rules only. It should return the same pointer until the
	// lists change: the proxy reuses a kept-alive upstream connection of
	// plain HTTP only while the policy it was checked under is in force.
	Policy func() *policy.AddressPolicy
	// HostAddrs returns this host's own addresses, which an allowed name may
	// not resolve to; nil means the addresses on this host's interfaces,
	// read at most once a second. They are added to the policy's HostAddrs.
	HostAddrs func() []netip.Addr
	// Parent is the parent proxy; nil: every connection goes direct.
	Parent *ParentProxy
	// MITM is the user's MITM proxy; nil: none. The hosts it takes go
	// through it, and neither through Parent nor direct.
	MITM *MITMProxy
	// Dial opens a TCP connection to an address; nil means a net.Dialer
	// with a 10 s connect timeout per address.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)

	hostMu    sync.Mutex
	hostAt    time.Time
	hostCache []netip.Addr
}

// Dialed describes a connection a Dialer opened.
type Dialed struct {
	Addr string // the remote address dialled: the destination's, the parent proxy's, or the MITM proxy's socket
	// Parent is the proxy the connection goes through: the parent proxy,
	// or the MITM proxy (scheme "unix", Path its socket); nil when direct.
	Parent *url.URL
}

var defaultNetDialer = &net.Dialer{Timeout: 10 * time.Second}

// Tunnel opens a byte stream to host:port for an HTTP CONNECT, a SOCKS5
// CONNECT or a captured connection: through the MITM proxy's CONNECT when
// it takes host, else through the parent proxy's CONNECT when one
// applies, else directly (see Direct). host must be canonical
// (hostname.Canonical).
func (d *Dialer) Tunnel(ctx context.Context, host string, port int) (net.Conn, Dialed, error) {
	if err := checkTarget(host, port); err != nil {
		return nil, Dialed{}, err
	}
	if d.MITM.takes(host) {
		return d.mitmTunnel(ctx, host, port)
	}
	if u := d.Parent.For(host, true); u != nil {
		return d.connectVia(ctx, u, host, port)
	}
	return d.Direct(ctx, host, port)
}

// Direct dials host:port without a parent proxy. An IP-literal host is
// dialled as it is (the lists judged it). A name is resolved once; every
// address the current policy refuses is dropped, and the survivors are
// tried in the resolver's order. When the policy refuses every address the
// error is an *AddressRefusedError; any other failure is an
// *UnreachableError.
func (d *Dialer) Direct(ctx context.Context, host string, port int) (net.Conn, Dialed, error) {
	if err := checkTarget(host, port); err != nil {
		return nil, Dialed{}, err
	}
	addrs, err := d.survivors(ctx, host, port)
	if err != nil {
		return nil, Dialed{}, err
	}
	var errs []error
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a, uint16(port)).String()
		c, err := d.dial(ctx, "tcp", ap)
		if err == nil {
			return c, Dialed{Addr: ap}, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, Dialed{}, &UnreachableError{Host: host, Port: port, Err: errors.Join(errs...)}
}

// survivors returns the addresses host:port may be dialled at.
func (d *Dialer) survivors(ctx context.Context, host string, port int) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	resolve := d.Resolve
	if resolve == nil {
		resolve = net.DefaultResolver.LookupNetIP
	}
	addrs, err := resolve(ctx, "ip", host)
	if err != nil {
		return nil, &UnreachableError{Host: host, Port: port, Err: err}
	}
	for i, a := range addrs {
		addrs[i] = a.Unmap()
	}
	kept, reason := d.addressPolicy().FilterAddrs(host, port, addrs)
	if reason != "" {
		return nil, &AddressRefusedError{Host: host, Port: port, Reason: reason}
	}
	if len(kept) == 0 {
		return nil, &UnreachableError{Host: host, Port: port, Err: errNoAddresses}
	}
	return kept, nil
}

// addressPolicy is the policy in force now, with this host's addresses.
func (d *Dialer) addressPolicy() *policy.AddressPolicy {
	var p policy.AddressPolicy
	if d.Policy != nil {
		if cur := d.Policy(); cur != nil {
			p = *cur
		}
	}
	p.HostAddrs = append(slices.Clip(p.HostAddrs), d.hostAddrs()...)
	return &p
}

func (d *Dialer) hostAddrs() []netip.Addr {
	if d.HostAddrs != nil {
		return d.HostAddrs()
	}
	d.hostMu.Lock()
	defer d.hostMu.Unlock()
	if now := time.Now(); now.Sub(d.hostAt) > time.Second {
		d.hostCache, d.hostAt = interfaceAddrs(), now
	}
	return d.hostCache
}

// interfaceAddrs lists the addresses on this host's interfaces.
func interfaceAddrs() []netip.Addr {
	ifAddrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, ia := range ifAddrs {
		if n, ok := ia.(*net.IPNet); ok {
			if a, ok := netip.AddrFromSlice(n.IP); ok {
				out = append(out, a.Unmap())
			}
		}
	}
	return out
}

func (d *Dialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if d.Dial != nil {
		return d.Dial(ctx, network, addr)
	}
	return defaultNetDialer.DialContext(ctx, network, addr)
}

// checkTarget refuses a host that is not in canonical form (so nothing
// unvetted reaches a resolver or a parent's CONNECT line) and a bad port.
func checkTarget(host string, port int) error {
	if c, err := hostname.Canonical(host); err != nil || c != host {
		return fmt.Errorf("dial: host %q is not canonical", host)
	}
	if port < 1 || port > 65535 {
		return fmt.Errorf("dial: port %d is not 1-65535", port)
	}
	return nil
}

// authority is host:port with an IPv6 host in brackets.
func authority(host string, port int) string {
	return net.JoinHostPort(host, strconv.Itoa(port))
}
