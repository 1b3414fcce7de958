package protocol

import (
	"errors"
	"fmt"

	"github.com/srt-sandbox/decider/policy"
)

// The rules of each field, shared by the decoders and Encode. Each returns
// nil or what is wrong, for ProtocolError.Detail.

// Headers an allow may not set: the credential headers (only cred places a
// credential) and the framing ones. Compared after foldName.
var neverSet = map[string]bool{
	"authorization":       true,
	"proxy-authorization": true,
	"cookie":              true,
	"x-api-key":           true,
	"host":                true,
	"content-length":      true,
	"transfer-encoding":   true,
	"connection":          true,
	"upgrade":             true,
	"te":                  true,
	"trailer":             true,
	"keep-alive":          true,
	"proxy-connection":    true, // non-standard, but still sent by libcurl (as in httputil's hopHeaders)
}

// Headers an allow may not remove: framing.
var neverRemoved = map[string]bool{
	"host":              true,
	"content-length":    true,
	"transfer-encoding": true,
	"connection":        true,
	"upgrade":           true,
	"te":                true,
	"trailer":           true,
	"keep-alive":        true,
	"proxy-connection":  true,
}

func checkID(id uint64) error {
	if id < 1 || id > MaxID {
		return fmt.Errorf("id %d is outside 1..2^53-1", id)
	}
	return nil
}

// checkHeaders checks a header map's names and values and its size:
// MaxHeaderValues values (a name without values counts one) and
// MaxHeaderBytes of names and values. needValues refuses a name without
// values (a req's headers).
func checkHeaders(field string, h Headers, needValues bool) (refuse string, err error) {
	if len(h) == 0 {
		return RefuseBadHeader, fmt.Errorf("%s is present but empty", field)
	}
	entries, size := 0, 0
	for i, f := range h {
		if err := headerName(f.Name); err != nil {
			return RefuseBadHeader, fmt.Errorf("%s: %w", field, err)
		}
		for _, g := range h[:i] {
			if g.Name == f.Name {
				return RefuseBadHeader, fmt.Errorf("%s names %q twice", field, f.Name)
			}
		}
		if needValues && len(f.Values) == 0 {
			return RefuseBadHeader, fmt.Errorf("%s gives %q no value", field, f.Name)
		}
		for _, v := range f.Values {
			if err := headerValue(f.Name, v); err != nil {
				return RefuseBadHeader, fmt.Errorf("%s: %w", field, err)
			}
			size += len(v)
		}
		entries += max(1, len(f.Values))
		size += len(f.Name)
	}
	if entries > MaxHeaderValues || size > MaxHeaderBytes {
		return RefuseHeadersTooLarge, fmt.Errorf("%s: %d values, %d bytes: over %d values or %d bytes",
			field, entries, size, MaxHeaderValues, MaxHeaderBytes)
	}
	return "", nil
}

// checkEgressList: entries of a hello's or update's allowedDomains /
// deniedDomains, unique.
func checkEgressList(field string, list []string) error {
	for i, e := range list {
		if !policy.ValidEgressEntry(e) {
			return fmt.Errorf("%s[%d] %q is not an egress entry", field, i, e)
		}
	}
	return unique(field, list)
}

// checkAddressList: deniedResolvedAddresses, optional (non-nil means
// present, so not empty), entries unique.
func checkAddressList(list []string) error {
	const field = "deniedResolvedAddresses"
	if list == nil {
		return nil
	}
	if len(list) == 0 {
		return errors.New(field + " is present but empty")
	}
	for i, e := range list {
		if _, err := policy.ParseAddressRange(e); err != nil {
			return fmt.Errorf("%s[%d] %q is not an IP address or CIDR range", field, i, e)
		}
	}
	return unique(field, list)
}

// checkExtNames: an offered or accepted ext list; names are 1–64 bytes of
// [a-z0-9._-] starting with a letter or digit.
func checkExtNames(list []string) error {
	if list == nil {
		return nil
	}
	if len(list) == 0 {
		return errors.New("ext is present but empty")
	}
	for _, n := range list {
		if !extName(n) {
			return fmt.Errorf("ext name %q is not [a-z0-9][a-z0-9._-]{0,63}", n)
		}
	}
	return unique("ext", list)
}

func extName(n string) bool {
	if n == "" || len(n) > maxExtName || n[0] == '.' || n[0] == '_' || n[0] == '-' {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func unique(field string, list []string) error {
	if len(list) < 16 {
		for i, e := range list {
			for _, f := range list[:i] {
				if e == f {
					return fmt.Errorf("%s lists %q twice", field, e)
				}
			}
		}
		return nil
	}
	seen := make(map[string]bool, len(list))
	for _, e := range list {
		if seen[e] {
			return fmt.Errorf("%s lists %q twice", field, e)
		}
		seen[e] = true
	}
	return nil
}
