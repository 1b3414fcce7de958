package protocol

import (
	"encoding/base64"
	"errors"
	"fmt"
)

func decodeReq(o jsonValue, ext bool) (*Req, error) {
	r := &Req{}
	var kind bool
	err := eachField(o, func(k string, v jsonValue) (err error) {
		switch {
		case k == "id":
			r.ID, err = idField(v)
		case k == "method":
			r.Method, err = strField(k, v)
		case k == "host":
			r.Host, err = strField(k, v)
		case k == "port":
			r.Port, err = intField(k, v, 1, 65535)
		case k == "hostHeader":
			r.HostHeader, err = optString(k, v)
		case k == "sni":
			r.SNI, err = optString(k, v)
		case k == "path":
			r.Path, err = strField(k, v)
		case k == "query":
			r.Query, err = optString(k, v)
		case k == "headers":
			r.Headers, err = headerMap(k, v)
		case k == "kind" && ext:
			var s string
			if s, err = strField(k, v); err == nil {
				if r.Kind, kind = parseKind(s); !kind {
					err = fmt.Errorf("kind %q: want connect, socks or http", s)
				}
			}
		case k == "user" && ext:
			r.User, err = strField(k, v)
			if err == nil && r.User == "" {
				err = errors.New("user is empty")
			}
		default:
			err = unknownKey(k)
		}
		return err
	})
	switch {
	case err != nil:
	case ext && !kind:
		// user may be absent: srt-proxy run alone has no proxy
		// authentication, so no username to send.
		err = missing("kind")
	default:
		if err = checkID(r.ID); err == nil {
			_, err = checkReq(r)
		}
	}
	return r, err
}

func decodeBody(o jsonValue) (*Body, error) {
	b := &Body{}
	var data bool
	err := eachField(o, func(k string, v jsonValue) (err error) {
		switch k {
		case "id":
			b.ID, err = idField(v)
		case "data":
			data = true
			b.Data, err = base64Field(v)
		case "cut":
			if v.kind != jsonBool || !v.b {
				err = errors.New("cut is present but not true")
			}
			b.Cut = true
		default:
			err = unknownKey(k)
		}
		return err
	})
	if err == nil && !data {
		err = missing("data")
	}
	if err == nil {
		err = checkBody(b)
	}
	return b, err
}

// base64Field: standard, padded base64 with no line breaks (which Go's
// decoder would skip) and zero padding bits.
func base64Field(v jsonValue) ([]byte, error) {
	if v.kind != jsonString {
		return nil, fmt.Errorf("data is a %s", v.kind)
	}
	s := v.text
	if len(s) > maxBodyBase64 {
		return nil, fmt.Errorf("data is over %d bytes", MaxBody)
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '\r' || s[i] == '\n' {
			return nil, errors.New("data has a line break")
		}
	}
	d, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, errors.New("data is not standard padded base64")
	}
	return d, nil
}

func decodeSync(o jsonValue) (*Sync, error) {
	s := &Sync{}
	err := eachField(o, func(k string, v jsonValue) (err error) {
		if k != "id" {
			return unknownKey(k)
		}
		s.ID, err = idField(v)
		return err
	})
	if err == nil {
		err = checkID(s.ID)
	}
	return s, err
}

func decodeRefused(o jsonValue) (*Refused, error) {
	r := &Refused{}
	err := eachField(o, func(k string, v jsonValue) (err error) {
		switch k {
		case "id":
			r.ID, err = idField(v)
		case "reason":
			r.Reason, err = strField(k, v)
		default:
			err = unknownKey(k)
		}
		return err
	})
	if err == nil {
		err = checkRefused(r)
	}
	return r, err
}
