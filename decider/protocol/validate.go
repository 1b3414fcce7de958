package protocol

import (
	"errors"
	"fmt"
)

// The rules of each message as a whole. The decoders run them on what they
// read and Encode on what it is given, so a message that encodes decodes.

func checkProxyHello(h *ProxyHello) error {
	return checkExtNames(h.Ext)
}

// checkDeciderHello: both lists; ext, when present, accepts srt.v1 and
// srt.mask.v1 (the extensions this codec knows, so the only ones a proxy
// using it offers), srt.mask.v1 only with srt.v1; deniedResolvedAddresses
// only under srt.v1.
func checkDeciderHello(h *DeciderHello) error {
	if err := checkEgressList("allowedDomains", h.AllowedDomains); err != nil {
		return err
	}
	if err := checkEgressList("deniedDomains", h.DeniedDomains); err != nil {
		return err
	}
	if err := checkExtNames(h.Ext); err != nil {
		return err
	}
	for _, e := range h.Ext {
		if e != ExtSRTv1 && e != ExtMaskV1 {
			return fmt.Errorf("ext accepts %q, which was not offered", e)
		}
	}
	if h.HasExt(ExtMaskV1) && !h.HasExt(ExtSRTv1) {
		return errors.New("ext accepts srt.mask.v1 without srt.v1")
	}
	if h.DeniedResolvedAddresses != nil && !h.HasExt(ExtSRTv1) {
		return errors.New("deniedResolvedAddresses without srt.v1")
	}
	return checkAddressList(h.DeniedResolvedAddresses)
}

func checkUpdate(u *Update) error {
	if err := checkEgressList("allowedDomains", u.AllowedDomains); err != nil {
		return err
	}
	if err := checkEgressList("deniedDomains", u.DeniedDomains); err != nil {
		return err
	}
	return checkAddressList(u.DeniedResolvedAddresses)
}

func checkAllow(a *Allow) error {
	if err := checkID(a.ID); err != nil {
		return err
	}
	if a.SetHeaders != nil {
		if _, err := checkHeaders("setHeaders", a.SetHeaders, false); err != nil {
			return err
		}
		for _, f := range a.SetHeaders {
			if neverSet[foldName(f.Name)] {
				return fmt.Errorf("setHeaders may not set %q", f.Name)
			}
		}
	}
	if a.RemoveHeaders != nil {
		if err := checkRemoveHeaders(a.RemoveHeaders); err != nil {
			return err
		}
	}
	if a.Inject != nil {
		if err := checkMaskIDs("inject", a.Inject); err != nil {
			return err
		}
	}
	if (a.Cred == nil) != (a.Credential == nil) {
		return errors.New("cred and credential come together or not at all")
	}
	if a.Cred != nil {
		if err := plainText("cred", *a.Cred); err != nil {
			return err
		}
		if !credential(*a.Credential) {
			return fmt.Errorf("credential is not 1..%d characters of \\x21-\\x7e", MaxCredential)
		}
	}
	return nil
}

func checkRemoveHeaders(list []string) error {
	if len(list) == 0 {
		return errors.New("removeHeaders is present but empty")
	}
	size := 0
	for _, n := range list {
		if err := headerName(n); err != nil {
			return fmt.Errorf("removeHeaders: %w", err)
		}
		if neverRemoved[foldName(n)] {
			return fmt.Errorf("removeHeaders may not remove %q", n)
		}
		size += len(n)
	}
	if len(list) > MaxRemoveNames || size > MaxRemoveBytes {
		return fmt.Errorf("removeHeaders: %d names, %d bytes: over %d names or %d bytes",
			len(list), size, MaxRemoveNames, MaxRemoveBytes)
	}
	return unique("removeHeaders", list)
}

func credential(v string) bool {
	if v == "" || len(v) > MaxCredential {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x21 || v[i] > 0x7e {
			return false
		}
	}
	return true
}

func checkDeny(d *Deny) error {
	if err := checkID(d.ID); err != nil {
		return err
	}
	if d.Status < 400 || d.Status > 599 {
		return fmt.Errorf("status %d is outside 400..599", d.Status)
	}
	if d.Reason != nil {
		return reasonText(*d.Reason)
	}
	return nil
}

func checkNeedBody(n *NeedBody) error {
	if err := checkID(n.ID); err != nil {
		return err
	}
	if n.Max < 1 || n.Max > MaxBody {
		return fmt.Errorf("max %d is outside 1..%d", n.Max, MaxBody)
	}
	return nil
}

func checkBody(b *Body) error {
	if err := checkID(b.ID); err != nil {
		return err
	}
	if len(b.Data) > MaxBody {
		return fmt.Errorf("data is %d bytes, over %d", len(b.Data), MaxBody)
	}
	return nil
}

func checkRefused(r *Refused) error {
	if err := checkID(r.ID); err != nil {
		return err
	}
	return reasonText(r.Reason)
}

// checkReq checks everything of a req but its id and its encoded size, in
// the order the proxy refuses a request it cannot ask about; refuse is the
// Refuse* reason.
func checkReq(r *Req) (refuse string, err error) {
	if r.Headers != nil {
		if refuse, err := checkHeaders("headers", r.Headers, true); err != nil {
			return refuse, err
		}
		if r.Headers.Get("host") != nil {
			return RefuseBadHeader, errors.New("headers include host")
		}
	}
	if r.HostHeader != nil {
		if *r.HostHeader == "" {
			return RefuseBadHeader, errors.New("hostHeader is present but empty")
		}
		if err := headerValue("host", *r.HostHeader); err != nil {
			return RefuseBadHeader, err
		}
	}
	if r.Method == "" || r.Host == "" || r.Path == "" || r.Port < 1 || r.Port > 65535 {
		return RefuseBadRequest, fmt.Errorf("method %q, host %q, path %q, port %d: one is empty or out of range",
			r.Method, r.Host, r.Path, r.Port)
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"host", &r.Host}, {"hostHeader", r.HostHeader}, {"sni", r.SNI}, {"path", &r.Path}} {
		if f.v != nil && len(*f.v) > MaxTarget {
			return RefuseTargetTooLarge, fmt.Errorf("%s is %d bytes, over %d", f.name, len(*f.v), MaxTarget)
		}
	}
	if err := checkReqText(r); err != nil {
		return RefuseBadRequest, err
	}
	return "", nil
}

func checkReqText(r *Req) error {
	if !isToken(r.Method) {
		return fmt.Errorf("method %q is not a token", r.Method)
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"host", &r.Host}, {"sni", r.SNI}, {"path", &r.Path}, {"query", r.Query}} {
		if f.v == nil {
			continue
		}
		if err := plainText(f.name, *f.v); err != nil {
			return err
		}
	}
	if hasUpper(r.Host) {
		return errors.New("host is not lower-case")
	}
	if r.SNI != nil && hasUpper(*r.SNI) {
		return errors.New("sni is not lower-case")
	}
	if r.Kind == KindNone && r.User == "" {
		return nil
	}
	return checkReqKind(r)
}

// checkReqKind: srt.v1's kind, present, and consistent with the rest of the
// req; user, when present, plain text.
func checkReqKind(r *Req) error {
	if r.Kind < KindConnect || r.Kind > KindHTTP {
		return fmt.Errorf("kind %q: want connect, socks or http", r.Kind)
	}
	if r.User != "" {
		if err := plainText("user", r.User); err != nil {
			return err
		}
	}
	if r.Kind == KindHTTP {
		if r.Method == "CONNECT" {
			return errors.New("an http req is not a CONNECT")
		}
		return nil
	}
	if r.Method != "CONNECT" || r.Path != "*" || r.Query != nil {
		return fmt.Errorf("a %s req has method CONNECT, path \"*\" and no query", r.Kind)
	}
	if r.Kind == KindSOCKS && (r.HostHeader != nil || r.SNI != nil || r.Headers != nil) {
		return errors.New("a socks req has no hostHeader, sni or headers")
	}
	return nil
}
