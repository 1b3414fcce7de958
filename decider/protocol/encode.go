package protocol

import (
	"encoding/base64"
	"fmt"
)

// Encode returns m's canonical JSON (compact, fields in the spec's order,
// optional fields omitted), without framing. It checks m against the same
// rules as the decoders and returns a *ProtocolError when m breaks one (a
// present-but-empty optional field, a forbidden header, …) or when the
// result is larger than the receiving end reads (MaxFrame, or MaxProxyFrame
// for a body). Whether srt.v1 or srt.mask.v1 is in force is the caller's
// to know: Encode accepts their fields whenever they are consistent. A
// masks message is judged alone, as against an empty MaskTable.
func Encode(m Message) ([]byte, error) {
	var (
		reason, limit = reasonOf(m), MaxFrame
		err           error
		b             []byte
	)
	switch m := m.(type) {
	case *ProxyHello:
		if err = checkProxyHello(m); err == nil {
			b = appendProxyHello(nil, m)
		}
	case *DeciderHello:
		if err = checkDeciderHello(m); err == nil {
			b = appendDeciderHello(nil, m)
		}
	case *Req:
		if err = checkID(m.ID); err == nil {
			_, err = checkReq(m)
		}
		if err == nil {
			b = appendReq(nil, m)
		}
	case *Body:
		limit = MaxProxyFrame
		if err = checkBody(m); err == nil {
			b = appendBody(m)
		}
	case *Refused:
		if err = checkRefused(m); err == nil {
			b = appendRefused(nil, m)
		}
	case *Sync:
		if err = checkID(m.ID); err == nil {
			b = append(appendID(appendHead(nil, TypeSync), m.ID), '}')
		}
	case *Allow:
		if err = checkAllow(m); err == nil {
			b = appendAllow(nil, m)
		}
	case *Deny:
		if err = checkDeny(m); err == nil {
			b = appendDeny(nil, m)
		}
	case *NeedBody:
		if err = checkNeedBody(m); err == nil {
			b = appendNeedBody(nil, m)
		}
	case *Update:
		if err = checkUpdate(m); err == nil {
			b = appendUpdate(nil, m)
		}
	case *Masks:
		if err = checkMasks(m); err == nil && m.Masks != nil {
			if perr := NewMaskTable().Apply(m); perr != nil {
				return nil, perr
			}
		}
		if err == nil {
			b = appendMasks(nil, m)
		}
	default:
		return nil, fmt.Errorf("protocol: cannot encode %T", m)
	}
	if err != nil {
		return nil, violation(reason, err.Error())
	}
	if len(b) > limit {
		return nil, violation(ReasonOversized, fmt.Sprintf("%d bytes, over %d", len(b), limit))
	}
	return b, nil
}

// reasonOf is the reason a broken m is reported with.
func reasonOf(m Message) string {
	switch m.(type) {
	case *ProxyHello, *DeciderHello:
		return ReasonBadHello
	case *Req:
		return ReasonBadReq
	case *Body:
		return ReasonBadBody
	case *Refused:
		return ReasonBadRefused
	case *Sync:
		return ReasonBadSync
	case *Update:
		return ReasonBadUpdate
	case *Masks:
		return ReasonBadMasks
	}
	return ReasonBadVerdict
}

func appendHead(b []byte, t string) []byte {
	b = append(b, `{"t":"`...)
	b = append(b, t...)
	return append(b, '"')
}

func appendID(b []byte, id uint64) []byte {
	return appendUint(appendKey(b, "id"), id)
}

func appendProxyHello(b []byte, h *ProxyHello) []byte {
	b = append(appendHead(b, TypeHello), `,"proto":1`...)
	if h.Ext != nil {
		b = appendStrings(appendKey(b, "ext"), h.Ext)
	}
	return append(b, '}')
}

func appendDeciderHello(b []byte, h *DeciderHello) []byte {
	b = append(appendHead(b, TypeHello), `,"proto":1`...)
	b = appendStrings(appendKey(b, "allowedDomains"), h.AllowedDomains)
	b = appendStrings(appendKey(b, "deniedDomains"), h.DeniedDomains)
	if h.Ext != nil {
		b = appendStrings(appendKey(b, "ext"), h.Ext)
	}
	if h.DeniedResolvedAddresses != nil {
		b = appendStrings(appendKey(b, "deniedResolvedAddresses"), h.DeniedResolvedAddresses)
	}
	return append(b, '}')
}

func appendUpdate(b []byte, u *Update) []byte {
	b = appendHead(b, TypeUpdate)
	b = appendStrings(appendKey(b, "allowedDomains"), u.AllowedDomains)
	b = appendStrings(appendKey(b, "deniedDomains"), u.DeniedDomains)
	if u.DeniedResolvedAddresses != nil {
		b = appendStrings(appendKey(b, "deniedResolvedAddresses"), u.DeniedResolvedAddresses)
	}
	return append(b, '}')
}

func appendReq(b []byte, r *Req) []byte {
	b = appendID(appendHead(b, TypeReq), r.ID)
	b = appendString(appendKey(b, "method"), r.Method)
	b = appendString(appendKey(b, "host"), r.Host)
	b = appendUint(appendKey(b, "port"), uint64(r.Port))
	if r.HostHeader != nil {
		b = appendString(appendKey(b, "hostHeader"), *r.HostHeader)
	}
	if r.SNI != nil {
		b = appendString(appendKey(b, "sni"), *r.SNI)
	}
	b = appendString(appendKey(b, "path"), r.Path)
	if r.Query != nil {
		b = appendString(appendKey(b, "query"), *r.Query)
	}
	if r.Headers != nil {
		b = appendHeaders(appendKey(b, "headers"), r.Headers)
	}
	if r.Kind != KindNone {
		b = appendString(appendKey(b, "kind"), r.Kind.String())
	}
	if r.User != "" {
		b = appendString(appendKey(b, "user"), r.User)
	}
	return append(b, '}')
}

// appendBody builds the body message in one allocation: its data can be
// MaxBody bytes. One byte more is room for a line's newline (Frame).
func appendBody(m *Body) []byte {
	b := make([]byte, 0, len(bodyHead)+base64.StdEncoding.EncodedLen(len(m.Data))+len(bodyTail)+1)
	b = appendID(appendHead(b, TypeBody), m.ID)
	b = append(b, `,"data":"`...)
	b = base64.StdEncoding.AppendEncode(b, m.Data)
	b = append(b, '"')
	if m.Cut {
		b = append(b, `,"cut":true`...)
	}
	return append(b, '}')
}

func appendRefused(b []byte, r *Refused) []byte {
	b = appendID(appendHead(b, TypeRefused), r.ID)
	b = appendString(appendKey(b, "reason"), r.Reason)
	return append(b, '}')
}

func appendVerdictHead(b []byte, id uint64, action string) []byte {
	b = appendID(appendHead(b, TypeVerdict), id)
	b = append(b, `,"action":"`...)
	b = append(b, action...)
	return append(b, '"')
}

func appendAllow(b []byte, a *Allow) []byte {
	b = appendVerdictHead(b, a.ID, ActionAllow)
	if a.SetHeaders != nil {
		b = appendHeaders(appendKey(b, "setHeaders"), a.SetHeaders)
	}
	if a.RemoveHeaders != nil {
		b = appendStrings(appendKey(b, "removeHeaders"), a.RemoveHeaders)
	}
	if a.Cred != nil {
		b = appendString(appendKey(b, "cred"), *a.Cred)
	}
	if a.Credential != nil {
		b = appendString(appendKey(b, "credential"), *a.Credential)
	}
	if a.Inject != nil {
		b = appendStrings(appendKey(b, "inject"), a.Inject)
	}
	return append(b, '}')
}

func appendDeny(b []byte, d *Deny) []byte {
	b = appendVerdictHead(b, d.ID, ActionDeny)
	b = appendUint(appendKey(b, "status"), uint64(d.Status))
	if d.Reason != nil {
		b = appendString(appendKey(b, "reason"), *d.Reason)
	}
	return append(b, '}')
}

func appendNeedBody(b []byte, n *NeedBody) []byte {
	b = appendVerdictHead(b, n.ID, ActionNeedBody)
	b = appendUint(appendKey(b, "max"), uint64(n.Max))
	return append(b, '}')
}
