package netns

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// srt's nftables table in each family (ip, ip6), and its chains.
const (
	tableName   = "srt"
	natChain    = "nat-output"
	filterChain = "filter-output"
)

// natType is the type of the NAT chain. Only this package's tests change
// it, to a type no kernel has, to see what a kernel without NAT does.
var natType = nftables.ChainTypeNAT

// installRules installs the rules of both families (IPv6 when v6) in the
// helper's namespace, over nftables netlink, in one batch: the kernel
// takes all of them or none.
//
//	nat OUTPUT    meta l4proto tcp, daddr <loopback entry>, dport P  redirect → CapturePort  (each entry)
//	nat OUTPUT    meta l4proto udp, dport 53                          dnat → 127.0.0.53:53    (IPv4)
//	nat OUTPUT    meta l4proto tcp, daddr not in <loopback net>       redirect → CapturePort
//	filter OUTPUT meta l4proto udp, saddr 127.0.0.53, sport 53        accept                  (IPv4: the name server's answers)
//	filter OUTPUT meta l4proto udp, daddr not in <loopback net>       reject (the send fails: EPERM)
//
// The sandbox's own loopback stays its own: servers and clients inside
// still talk to each other, except on the loopback entries' ports, which
// lead to the host's. In process, not by running iptables-restore: each
// run of it costs milliseconds of CPU, and the command waits for the
// rules.
func installRules(v6 bool, loopback []netip.AddrPort) error {
	c, err := nftables.New()
	if err != nil {
		return rulesError(err)
	}
	addRules(c, false, loopback)
	if v6 {
		addRules(c, true, loopback)
	}
	err = c.Flush()
	if errors.Is(err, unix.EMSGSIZE) {
		return fmt.Errorf("%d loopback destinations (allowedDomains entries naming a loopback host and a port; localhost is two) need more rules than one netlink message holds (some 12000 fit): allow fewer: %w", len(loopback), err)
	}
	return rulesError(err)
}

// rulesError says what a refused batch means.
func rulesError(err error) error {
	if err == nil {
		return nil
	}
	// The kernel refuses every message after the first it refuses: the
	// first says why (nftables joins the errors one by one, wrapped).
	for {
		if j, ok := err.(interface{ Unwrap() []error }); ok && len(j.Unwrap()) > 0 {
			err = j.Unwrap()[0]
		} else if w, ok := errors.Unwrap(err).(interface{ Unwrap() []error }); ok {
			err = w.(error)
		} else {
			break
		}
	}
	// A kernel without nf_tables has no NETLINK_NETFILTER socket; one
	// without its NAT, redirect or reject has no such chain type or
	// expression.
	if errors.Is(err, unix.EPROTONOSUPPORT) || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EAFNOSUPPORT) {
		return fmt.Errorf("the kernel lacks nftables NAT support (nf_tables with nat chains, redirect, dnat and reject: modules nft_chain_nat, nft_nat, nft_redir, nft_reject; `unshare -rn nft 'add table ip t; add chain ip t c { type nat hook output priority -100; }'` shows whether it has them): %w", err)
	}
	return fmt.Errorf("the kernel refused the nftables rules: %w", err)
}

// addRules queues one family's table, chains and rules on c.
func addRules(c *nftables.Conn, v6 bool, loopback []netip.AddrPort) {
	fam, loNet, unreachable := nftables.TableFamilyIPv4, netip.MustParsePrefix("127.0.0.0/8"), uint8(3) // ICMP port unreachable
	if v6 {
		fam, loNet, unreachable = nftables.TableFamilyIPv6, netip.MustParsePrefix("::1/128"), 4 // ICMPv6 port unreachable
	}
	t := c.AddTable(&nftables.Table{Family: fam, Name: tableName})
	accept := nftables.ChainPolicyAccept
	nat := c.AddChain(&nftables.Chain{Table: t, Name: natChain, Type: natType,
		Hooknum: nftables.ChainHookOutput, Priority: nftables.ChainPriorityNATDest, Policy: &accept})
	filter := c.AddChain(&nftables.Chain{Table: t, Name: filterChain, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookOutput, Priority: nftables.ChainPriorityFilter, Policy: &accept})
	rule := func(ch *nftables.Chain, e ...[]expr.Any) {
		var all []expr.Any
		for _, x := range e {
			all = append(all, x...)
		}
		c.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: all})
	}
	capture := redirect(CapturePort)
	// One rule per loopback address, with its port or a set of its ports
	// (a rule per entry would cost some 350 bytes of the batch each, and
	// the batch is one netlink message of at most 208 KiB).
	ports, seen := map[netip.Addr][]uint16{}, map[netip.AddrPort]bool{}
	var addrs []netip.Addr
	for _, l := range loopback {
		a := l.Addr()
		if a.Is6() != v6 || seen[l] {
			continue
		}
		seen[l] = true
		if _, ok := ports[a]; !ok {
			addrs = append(addrs, a)
		}
		ports[a] = append(ports[a], l.Port())
	}
	for _, a := range addrs {
		rule(nat, l4proto(unix.IPPROTO_TCP), daddr(netip.PrefixFrom(a, a.BitLen()), true), dports(c, t, ports[a]), capture)
	}
	if !v6 {
		rule(nat, l4proto(unix.IPPROTO_UDP), dport(DNS.Port()), dnat(DNS))
	}
	rule(nat, l4proto(unix.IPPROTO_TCP), daddr(loNet, false), capture)
	if !v6 {
		// The name server's answer to a query the DNAT rule led to it
		// goes back to where the query came from (198.18.0.1), outside
		// the loopback net: let it pass the reject below. Only srt-proxy
		// holds that address and port (binding port 53 needs a
		// capability nothing inside has).
		rule(filter, l4proto(unix.IPPROTO_UDP), saddr(DNS.Addr()), sport(DNS.Port()),
			[]expr.Any{&expr.Verdict{Kind: expr.VerdictAccept}})
	}
	rule(filter, l4proto(unix.IPPROTO_UDP), daddr(loNet, false),
		[]expr.Any{&expr.Reject{Type: unix.NFT_REJECT_ICMP_UNREACH, Code: unreachable}})
}

// The expressions the rules are made of; each leaves its value in
// register 1 (and 2).

func l4proto(p byte) []expr.Any {
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{p}},
	}
}

// daddr matches the destination address in (or, with !in, out of) net.
func daddr(net netip.Prefix, in bool) []expr.Any {
	offset, size := uint32(16), uint32(4) // struct iphdr
	if net.Addr().Is6() {
		offset, size = 24, 16 // struct ipv6hdr
	}
	op := expr.CmpOpNeq
	if in {
		op = expr.CmpOpEq
	}
	e := []expr.Any{&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: offset, Len: size}}
	if net.Bits() != net.Addr().BitLen() {
		mask := make([]byte, size)
		for i := range net.Bits() {
			mask[i/8] |= 0x80 >> (i % 8)
		}
		e = append(e, &expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: size, Mask: mask, Xor: make([]byte, size)})
	}
	return append(e, &expr.Cmp{Op: op, Register: 1, Data: net.Masked().Addr().AsSlice()})
}

// saddr matches the source address a (IPv4).
func saddr(a netip.Addr) []expr.Any {
	return []expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 12, Len: 4}, // struct iphdr
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: a.AsSlice()},
	}
}

// sport matches the TCP or UDP source port.
func sport(p uint16) []expr.Any {
	return []expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 0, Len: 2},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: be16(p)},
	}
}

// dport matches the TCP or UDP destination port.
func dport(p uint16) []expr.Any {
	return []expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: be16(p)},
	}
}

// dports matches any of the destination ports ps: one, or a set of them
// that it queues on c in table t.
func dports(c *nftables.Conn, t *nftables.Table, ps []uint16) []expr.Any {
	if len(ps) == 1 {
		return dport(ps[0])
	}
	set := &nftables.Set{Table: t, Anonymous: true, Constant: true, KeyType: nftables.TypeInetService}
	elems := make([]nftables.SetElement, len(ps))
	for i, p := range ps {
		elems[i].Key = be16(p)
	}
	// The only errors are of sets that are not constant, or of elements
	// that cannot be encoded: none here.
	c.AddSet(set, elems)
	return []expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2},
		&expr.Lookup{SourceRegister: 1, SetName: set.Name, SetID: set.ID},
	}
}

// redirect leads the connection to port p of the loopback interface.
func redirect(p uint16) []expr.Any {
	return []expr.Any{
		&expr.Immediate{Register: 1, Data: be16(p)},
		&expr.Redir{RegisterProtoMin: 1},
	}
}

// dnat leads the packet to ap (IPv4).
func dnat(ap netip.AddrPort) []expr.Any {
	return []expr.Any{
		&expr.Immediate{Register: 1, Data: ap.Addr().AsSlice()},
		&expr.Immediate{Register: 2, Data: be16(ap.Port())},
		&expr.NAT{Type: expr.NATTypeDestNAT, Family: unix.NFPROTO_IPV4, RegAddrMin: 1, RegProtoMin: 2},
	}
}

func be16(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }
