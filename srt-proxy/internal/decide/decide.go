// Package decide joins the proxy's one seam to policy (ask.Asker) to a
// decider link: it turns a proxy request into a protocol req and a
// verdict back, and keeps the resolved-address policy the decider's lists
// imply.
package decide

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"sync/atomic"

	"github.com/srt-sandbox/decider/policy"
	"github.com/srt-sandbox/decider/protocol"
	"github.com/srt-sandbox/srt-proxy/internal/link"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
)

// Asker asks a decider over a link.
type Asker struct {
	Link *link.Link
}

var _ ask.Asker = (*Asker)(nil)

// Ask implements ask.Asker.
func (a *Asker) Ask(ctx context.Context, r *ask.Request) (ask.Verdict, error) {
	req := toReq(r, a.Link.Ext())
	if err := protocol.ValidateReq(req); err != nil {
		var u *protocol.UnaskableError
		if errors.As(err, &u) {
			return ask.Verdict{}, &ask.UnaskableError{Reason: u.Reason}
		}
		return ask.Verdict{}, err
	}
	v, inject, err := a.Link.Ask(ctx, req, r.Body)
	if err != nil {
		if errors.Is(err, link.ErrBodyless) {
			return ask.Verdict{}, ask.ErrBodylessBody
		}
		return ask.Verdict{}, err
	}
	switch v := v.(type) {
	case *protocol.Allow:
		// Refused names the request by it; the decider remembers a
		// window of recent allows, and forgets older ones.
		r.AllowedAs = req.ID
		out := allowVerdict(v, r.Host)
		out.Inject = injectMasks(inject)
		return out, nil
	case *protocol.Deny:
		reason := ""
		if v.Reason != nil {
			reason = *v.Reason
		}
		return ask.Verdict{Status: v.Status, Reason: reason}, nil
	default: // the link returns only allows and denies
		return ask.Verdict{}, fmt.Errorf("%w: unexpected verdict %T", link.ErrUnavailable, v)
	}
}

// injectMasks are the masks an allow names (srt.mask.v1), as the proxy's
// request path takes them; nil when it names none.
func injectMasks(ms []protocol.Mask) []ask.Mask {
	if len(ms) == 0 {
		return nil
	}
	out := make([]ask.Mask, len(ms))
	for i, m := range ms {
		out[i] = ask.Mask{ID: m.ID, Sentinel: m.Sentinel, Value: m.Value}
		if m.AWS != nil {
			out[i].AWSPair, out[i].AWSRole = m.AWS.Pair, m.AWS.Role
		}
	}
	return out
}

// Refused implements ask.Asker: it names the request by the id it was
// allowed under (nothing, for a request never allowed).
func (a *Asker) Refused(r *ask.Request, reason string) {
	a.Link.Refused(r.AllowedAs, reason)
}

// toReq is the req for r. kind and user are srt.v1's, sent only when the
// extension is in force.
func toReq(r *ask.Request, ext bool) *protocol.Req {
	req := &protocol.Req{Method: r.Method, Host: r.Host, Port: r.Port, Path: r.Path}
	if ext {
		req.User = r.User
		switch r.Kind {
		case ask.KindConnect:
			req.Kind = protocol.KindConnect
		case ask.KindSOCKS:
			req.Kind = protocol.KindSOCKS
		case ask.KindHTTP:
			req.Kind = protocol.KindHTTP
		}
	}
	if r.HostHeader != "" {
		h := r.HostHeader
		req.HostHeader = &h
	}
	if r.SNI != "" {
		sni := r.SNI
		req.SNI = &sni
	}
	if r.Query != "" {
		q := r.Query
		req.Query = &q
	}
	if len(r.Headers) > 0 {
		names := r.HeaderNames
		if len(names) != len(r.Headers) {
			names = make([]string, 0, len(r.Headers))
			for n := range r.Headers {
				names = append(names, n)
			}
			sort.Strings(names)
		}
		for _, n := range names {
			req.Headers = append(req.Headers, protocol.Header{Name: n, Values: r.Headers[n]})
		}
	}
	return req
}

// Addresses is the resolved-address policy implied by the decider's lists:
// the IP literals of the lists (deny-listed ones refused, allow-listed
// ones exempt) and deniedResolvedAddresses.
type Addresses struct {
	// Base are ranges refused on top of the lists' (proxy-only mode's
	// private ranges); nil in srt's mode.
	Base []netip.Prefix
	cur  atomic.Pointer[policy.AddressPolicy]
}

// Set rebuilds the policy from a hello or an update.
func (a *Addresses) Set(l link.Lists) {
	p := &policy.AddressPolicy{DeniedRanges: append([]netip.Prefix(nil), a.Base...)}
	// Entries are the settings' (srt's mode) or a hello's (proxy-only
	// mode), whose grammars differ: either is read.
	for _, e := range l.AllowedDomains {
		if pat, err := policy.ParseAllowPattern(e); err == nil {
			p.Allowed = append(p.Allowed, pat)
		} else if pat, err := policy.ParseEgressPattern(e); err == nil {
			p.Allowed = append(p.Allowed, pat)
		}
	}
	for _, e := range l.DeniedDomains {
		if pat, err := policy.ParseDenyPattern(e); err == nil {
			p.Denied = append(p.Denied, pat)
		} else if pat, err := policy.ParseEgressPattern(e); err == nil {
			p.Denied = append(p.Denied, pat)
		}
	}
	for _, r := range l.DeniedResolvedAddresses {
		if pfx, err := policy.ParseAddressRange(r); err == nil {
			p.DeniedRanges = append(p.DeniedRanges, pfx)
		}
	}
	a.cur.Store(p)
}

// Policy returns the policy in force (for dial.Dialer.Policy).
func (a *Addresses) Policy() *policy.AddressPolicy { return a.cur.Load() }
