package credmask

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
)

func isJSONObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

// maskClaims re-encodes a JSON object (compact, its members in their
// order) with each string member named in claims replaced by
// sentinel(value).
func maskClaims(obj []byte, claims []string, sentinel func(string) string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for first := true; dec.More(); first = false {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if !first {
			out.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		out.Write(k)
		out.WriteByte(':')
		var s string
		if slices.Contains(claims, key) && json.Unmarshal(raw, &s) == nil && s != "" {
			v, _ := json.Marshal(sentinel(s))
			out.Write(v)
			continue
		}
		if err := json.Compact(&out, raw); err != nil {
			return nil, err
		}
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}
