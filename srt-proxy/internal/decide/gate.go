package decide

import (
	"fmt"
	"sync/atomic"

	"github.com/srt-sandbox/decider/policy"
)

// HostGate is proxy-only mode's host gate (proxy.Server.ProxyOnly): the
// allowedDomains and deniedDomains of the decider's hello, replaced by its
// srt.v1 updates. A destination on deniedDomains, or on no allowedDomains
// entry, is refused before the decider is asked.
type HostGate struct {
	lists atomic.Pointer[policy.Lists]
}

// NewHostGate is the gate of a hello's lists (the hello's grammar,
// policy.EgressLists); the error is the first entry it refuses.
func NewHostGate(allowed, denied []string) (*HostGate, error) {
	g := &HostGate{}
	if err := g.Update(allowed, denied); err != nil {
		return nil, err
	}
	return g, nil
}

// Update replaces the gate's lists; the next request uses them. Lists
// with an entry the hello's grammar refuses change nothing, and the error
// is that entry's.
func (g *HostGate) Update(allowed, denied []string) error {
	lists, errs := policy.EgressLists(allowed, denied)
	if errs != nil {
		return errs[0]
	}
	g.lists.Store(lists)
	return nil
}

// Allows is the gate for a canonical host and port; why is the policy's
// reason for a refusal (for the decision record).
func (g *HostGate) Allows(host string, port int) (ok bool, why string) {
	d := g.lists.Load().Decide(host, port)
	return d.Allow, d.Reason
}

// ProxyOnlyAddresses is the resolved-address policy of proxy-only mode,
// before the hello: its private ranges refused on top of the lists'.
func ProxyOnlyAddresses() *Addresses {
	return &Addresses{Base: policy.ProxyOnlyDefaultDeniedRanges}
}

// ExcludeHosts is a TLS termination's Exclude for the settings'
// excludeDomains: host patterns of the domain grammar (a name, "*.name",
// an IP literal), matched against the canonical CONNECT host.
func ExcludeHosts(entries []string) (func(host string) bool, error) {
	return HostPatterns("tlsTerminate.excludeDomains", entries)
}

// HostPatterns matches a canonical host against the entries of a
// settings list of host patterns without a port (setting names it in an
// error): tlsTerminate.excludeDomains, mitmProxy.domains.
func HostPatterns(setting string, entries []string) (func(host string) bool, error) {
	pats := make([]policy.Pattern, 0, len(entries))
	for _, e := range entries {
		p, err := policy.ParseHostPattern(e)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", setting, e, err)
		}
		pats = append(pats, p)
	}
	return func(host string) bool {
		for _, p := range pats {
			if p.Match(host, 0) {
				return true
			}
		}
		return false
	}, nil
}
