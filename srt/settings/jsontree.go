package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// value is one decoded JSON value. Objects keep their keys in file order so
// that issues are reported in the order a reader meets them.
type value struct {
	kind    kind
	str     string
	num     json.Number
	boolean bool
	arr     []*value
	obj     []member
}

type member struct {
	key string
	val *value
}

type kind int

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

func (k kind) String() string {
	return [...]string{"null", "boolean", "number", "string", "array", "object"}[k]
}

// get returns the member named key, or nil.
func (v *value) get(key string) *value {
	for _, m := range v.obj {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

// syntaxError is a JSON syntax problem with the byte offset it was found at.
type syntaxError struct {
	msg    string
	offset int64
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at offset %d", e.msg, e.offset) }

// parseJSON decodes data into a value tree. Duplicate keys in one object are
// an error: JSON.parse keeps the last one, which would let a later key
// silently undo an earlier rule.
func parseJSON(data []byte) (*value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &syntaxError{msg: "unexpected data after the top-level value", offset: dec.InputOffset()}
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (*value, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, wrapSyntax(err, dec)
	}
	switch t := tok.(type) {
	case nil:
		return &value{kind: kindNull}, nil
	case bool:
		return &value{kind: kindBool, boolean: t}, nil
	case json.Number:
		return &value{kind: kindNumber, num: t}, nil
	case string:
		return &value{kind: kindString, str: t}, nil
	case json.Delim:
		switch t {
		case '[':
			v := &value{kind: kindArray, arr: []*value{}}
			for dec.More() {
				e, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				v.arr = append(v.arr, e)
			}
			_, err := dec.Token()
			return v, wrapSyntax(err, dec)
		case '{':
			v := &value{kind: kindObject}
			seen := map[string]bool{}
			for dec.More() {
				off := dec.InputOffset()
				kt, err := dec.Token()
				if err != nil {
					return nil, wrapSyntax(err, dec)
				}
				key := kt.(string)
				if seen[key] {
					return nil, &syntaxError{msg: fmt.Sprintf("duplicate key %q", key), offset: off}
				}
				seen[key] = true
				e, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				v.obj = append(v.obj, member{key: key, val: e})
			}
			_, err := dec.Token()
			return v, wrapSyntax(err, dec)
		}
	}
	return nil, &syntaxError{msg: fmt.Sprintf("unexpected token %v", tok), offset: dec.InputOffset()}
}

func wrapSyntax(err error, dec *json.Decoder) error {
	if err == nil {
		return nil
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &syntaxError{msg: se.Error(), offset: se.Offset}
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return &syntaxError{msg: "unexpected end of JSON input", offset: dec.InputOffset()}
	}
	return &syntaxError{msg: err.Error(), offset: dec.InputOffset()}
}
