package protocol

import "fmt"

// DecodeDeciderMessage decodes and validates one message a proxy received:
// a *DeciderHello, a Verdict (*Allow, *Deny, *NeedBody) or, under srt.v1,
// an *Update. ext says whether srt.v1 may appear: for a hello, whether the
// proxy offered it; for anything else, whether the hellos agreed on it.
// srt.mask.v1 is not in force (DecodeDeciderMessageExts). Every violation
// is a *ProtocolError.
func DecodeDeciderMessage(b []byte, ext bool) (Message, error) {
	return decodeDeciderMessage(b, Exts{SRT: ext})
}

func decodeDeciderMessage(b []byte, x Exts) (Message, error) {
	if len(b) > MaxFrame {
		return nil, violation(ReasonOversized, "")
	}
	o, t, perr := frameObject(b)
	if perr != nil {
		return nil, perr
	}
	var (
		m      Message
		err    error
		reason string
	)
	switch {
	case t == TypeHello:
		reason = ReasonBadHello
		m, err = decodeDeciderHello(o, x)
	case t == TypeVerdict:
		reason = ReasonBadVerdict
		m, err = decodeVerdict(o, x.Mask)
	case t == TypeUpdate && x.SRT:
		reason = ReasonBadUpdate
		m, err = decodeUpdate(o)
	case t == TypeMasks && x.Mask:
		reason = ReasonBadMasks
		var ms *Masks
		if ms, err = decodeMasks(o); err == nil && ms.Masks != nil {
			// The rules between its masks: those of a table that
			// held none.
			if perr := NewMaskTable().Apply(ms); perr != nil {
				return nil, perr
			}
		}
		m = ms
	default:
		return nil, violation(ReasonUnexpected, fmt.Sprintf("t %q from a decider", t))
	}
	if err != nil {
		return nil, violation(reason, err.Error())
	}
	return m, nil
}

// DecodeProxyMessage decodes and validates one message a decider received:
// a *ProxyHello, a *Req, a *Body or, under srt.v1, a *Refused or a *Sync. ext says
// whether srt.v1 may appear: for a hello, whether the proxy may offer it
// (line framing); for anything else, whether the hellos agreed on it (then
// a req carries kind and user, otherwise it may not). A req is at most
// MaxFrame bytes, any message at most MaxProxyFrame. Every violation is a
// *ProtocolError.
func DecodeProxyMessage(b []byte, ext bool) (Message, error) {
	if len(b) > MaxProxyFrame {
		return nil, violation(ReasonOversized, "")
	}
	o, t, perr := frameObject(b)
	if perr != nil {
		return nil, perr
	}
	var (
		m      Message
		err    error
		reason string
	)
	switch {
	case t == TypeHello:
		reason = ReasonBadHello
		m, err = decodeProxyHello(o, ext)
	case t == TypeReq:
		if len(b) > MaxFrame {
			return nil, violation(ReasonOversized, "a req over MaxFrame")
		}
		reason = ReasonBadReq
		m, err = decodeReq(o, ext)
	case t == TypeBody:
		reason = ReasonBadBody
		m, err = decodeBody(o)
	case t == TypeRefused && ext:
		reason = ReasonBadRefused
		m, err = decodeRefused(o)
	case t == TypeSync && ext:
		reason = ReasonBadSync
		m, err = decodeSync(o)
	default:
		return nil, violation(ReasonUnexpected, fmt.Sprintf("t %q from a proxy", t))
	}
	if err != nil {
		return nil, violation(reason, err.Error())
	}
	return m, nil
}

// frameObject parses b and returns its object and its "t" ("" when there
// is no string t).
func frameObject(b []byte) (jsonValue, string, *ProtocolError) {
	o, perr := parseFrame(b)
	if perr != nil {
		return o, "", perr
	}
	for _, f := range o.fields {
		if f.key == "t" && f.value.kind == jsonString {
			return o, f.value.text, nil
		}
	}
	return o, "", nil
}

func decodeProxyHello(o jsonValue, ext bool) (*ProxyHello, error) {
	h := &ProxyHello{}
	var proto bool
	err := eachField(o, func(k string, v jsonValue) (err error) {
		switch {
		case k == "proto":
			proto, err = true, wantProto(v)
		case k == "ext" && ext:
			h.Ext, err = stringList(k, v)
		default:
			err = unknownKey(k)
		}
		return err
	})
	if err == nil && !proto {
		err = missing("proto")
	}
	if err == nil {
		err = checkProxyHello(h)
	}
	return h, err
}

func decodeDeciderHello(o jsonValue, x Exts) (*DeciderHello, error) {
	ext := x.SRT
	h := &DeciderHello{}
	var proto bool
	var dra bool
	err := eachField(o, func(k string, v jsonValue) (err error) {
		switch {
		case k == "proto":
			proto, err = true, wantProto(v)
		case k == "allowedDomains":
			h.AllowedDomains, err = stringList(k, v)
		case k == "deniedDomains":
			h.DeniedDomains, err = stringList(k, v)
		case k == "ext" && ext:
			h.Ext, err = stringList(k, v)
		case k == "deniedResolvedAddresses" && ext:
			dra = true // allowed only if ext accepts srt.v1, known once all is read
			h.DeniedResolvedAddresses, err = stringList(k, v)
		default:
			err = unknownKey(k)
		}
		return err
	})
	switch {
	case err != nil:
	case !proto:
		err = missing("proto")
	case h.AllowedDomains == nil:
		err = missing("allowedDomains")
	case h.DeniedDomains == nil:
		err = missing("deniedDomains")
	case dra && !h.HasExt(ExtSRTv1):
		err = unknownKey("deniedResolvedAddresses")
	case h.HasExt(ExtMaskV1) && !x.Mask:
		err = fmt.Errorf("ext accepts %q, which was not offered", ExtMaskV1)
	default:
		err = checkDeciderHello(h)
	}
	return h, err
}

func decodeUpdate(o jsonValue) (*Update, error) {
	u := &Update{}
	err := eachField(o, func(k string, v jsonValue) (err error) {
		switch k {
		case "allowedDomains":
			u.AllowedDomains, err = stringList(k, v)
		case "deniedDomains":
			u.DeniedDomains, err = stringList(k, v)
		case "deniedResolvedAddresses":
			u.DeniedResolvedAddresses, err = stringList(k, v)
		default:
			err = unknownKey(k)
		}
		return err
	})
	switch {
	case err != nil:
	case u.AllowedDomains == nil:
		err = missing("allowedDomains")
	case u.DeniedDomains == nil:
		err = missing("deniedDomains")
	default:
		err = checkUpdate(u)
	}
	return u, err
}

func decodeVerdict(o jsonValue, mask bool) (Verdict, error) {
	var action string
	for _, f := range o.fields {
		if f.key == "action" {
			if f.value.kind != jsonString {
				return nil, fmt.Errorf("action is a %s", f.value.kind)
			}
			action = f.value.text
		}
	}
	switch action {
	case ActionAllow:
		return decodeAllow(o, mask)
	case ActionDeny:
		return decodeDeny(o)
	case ActionNeedBody:
		return decodeNeedBody(o)
	case "":
		return nil, missing("action")
	}
	return nil, fmt.Errorf("action %q is not allow, deny or need_body", action)
}

func decodeAllow(o jsonValue, mask bool) (*Allow, error) {
	a := &Allow{}
	err := eachField(o, func(k string, v jsonValue) (err error) {
		switch {
		case k == "action":
		case k == "id":
			a.ID, err = idField(v)
		case k == "setHeaders":
			a.SetHeaders, err = headerMap(k, v)
		case k == "removeHeaders":
			a.RemoveHeaders, err = stringList(k, v)
		case k == "cred":
			a.Cred, err = optString(k, v)
		case k == "credential":
			a.Credential, err = optString(k, v)
		case k == "inject" && mask:
			a.Inject, err = stringList(k, v)
		default:
			err = unknownKey(k)
		}
		return err
	})
	if err == nil {
		err = checkAllow(a)
	}
	return a, err
}

func decodeDeny(o jsonValue) (*Deny, error) {
	d := &Deny{}
	err := eachField(o, func(k string, v jsonValue) (err error) {
		switch k {
		case "action":
		case "id":
			d.ID, err = idField(v)
		case "status":
			d.Status, err = intField(k, v, 400, 599)
		case "reason":
			d.Reason, err = optString(k, v)
		default:
			err = unknownKey(k)
		}
		return err
	})
	if err == nil {
		err = checkDeny(d)
	}
	return d, err
}

func decodeNeedBody(o jsonValue) (*NeedBody, error) {
	n := &NeedBody{}
	err := eachField(o, func(k string, v jsonValue) (err error) {
		switch k {
		case "action":
		case "id":
			n.ID, err = idField(v)
		case "max":
			n.Max, err = intField(k, v, 1, MaxBody)
		default:
			err = unknownKey(k)
		}
		return err
	})
	if err == nil {
		err = checkNeedBody(n)
	}
	return n, err
}
