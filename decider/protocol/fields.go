package protocol

import (
	"errors"
	"fmt"
	"strconv"
)

// Reading the fields of a parsed object. Presence and type are checked
// here; what a value may be is left to rules.go and validate.go.

// eachField calls f for every field but "t" (which chose the decoder),
// stopping at the first error.
func eachField(o jsonValue, f func(key string, v jsonValue) error) error {
	for _, fl := range o.fields {
		if fl.key == "t" {
			continue
		}
		if err := f(fl.key, fl.value); err != nil {
			return err
		}
	}
	return nil
}

func unknownKey(k string) error { return fmt.Errorf("unknown key %q", k) }

func missing(k string) error { return fmt.Errorf("%s is missing", k) }

func wantProto(v jsonValue) error {
	if v.kind != jsonNumber || v.text != "1" {
		return fmt.Errorf("proto is not %d", Proto)
	}
	return nil
}

func strField(k string, v jsonValue) (string, error) {
	if v.kind != jsonString {
		return "", fmt.Errorf("%s is a %s", k, v.kind)
	}
	return v.text, nil
}

// optString reads an optional string, which when present is not empty.
func optString(k string, v jsonValue) (*string, error) {
	s, err := strField(k, v)
	if err != nil {
		return nil, err
	}
	if s == "" {
		return nil, fmt.Errorf("%s is present but empty", k)
	}
	return &s, nil
}

// stringList reads an array of strings; an empty array gives a non-nil
// empty slice, so presence is kept.
func stringList(k string, v jsonValue) ([]string, error) {
	if v.kind != jsonArray {
		return nil, fmt.Errorf("%s is a %s", k, v.kind)
	}
	list := make([]string, 0, len(v.elems))
	for i, e := range v.elems {
		if e.kind != jsonString {
			return nil, fmt.Errorf("%s[%d] is a %s", k, i, e.kind)
		}
		list = append(list, e.text)
	}
	return list, nil
}

// headerMap reads {"name":["value",…],…}; names are unique already (a
// repeated key fails the parse).
func headerMap(k string, v jsonValue) (Headers, error) {
	if v.kind != jsonObject {
		return nil, fmt.Errorf("%s is a %s", k, v.kind)
	}
	h := make(Headers, 0, len(v.fields))
	for _, f := range v.fields {
		values, err := stringList(k+"."+f.key, f.value)
		if err != nil {
			return nil, err
		}
		h = append(h, Header{Name: f.key, Values: values})
	}
	return h, nil
}

// intText reads an integer literal: digits with an optional minus, no
// fraction and no exponent (the spec's "integer", read strictly: 4e2 and
// 400.0 are refused).
func intText(k string, v jsonValue) (int64, error) {
	if v.kind != jsonNumber {
		return 0, fmt.Errorf("%s is a %s", k, v.kind)
	}
	for i := 0; i < len(v.text); i++ {
		if c := v.text[i]; c == '.' || c == 'e' || c == 'E' {
			return 0, fmt.Errorf("%s %s is not spelled as an integer", k, v.text)
		}
	}
	n, err := strconv.ParseInt(v.text, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s %s is out of range", k, v.text)
	}
	return n, nil
}

func intField(k string, v jsonValue, lo, hi int) (int, error) {
	n, err := intText(k, v)
	if err != nil {
		return 0, err
	}
	if n < int64(lo) || n > int64(hi) {
		return 0, fmt.Errorf("%s %d is outside %d..%d", k, n, lo, hi)
	}
	return int(n), nil
}

func idField(v jsonValue) (uint64, error) {
	n, err := intText("id", v)
	if err != nil {
		return 0, err
	}
	if n < 1 || n > MaxID {
		return 0, errors.New("id " + v.text + " is outside 1..2^53-1")
	}
	return uint64(n), nil
}
