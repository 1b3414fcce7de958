package settingsfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Value is one decoded JSON value. Objects keep their keys in file order so
// that issues are reported in the order a reader meets them.
type Value struct {
	Kind Kind
	Str  string
	Num  json.Number
	Bool bool
	Arr  []*Value
	Obj  []Member
}

// Member is one key of an object and its value.
type Member struct {
	Key string
	Val *Value
}

// Kind is a JSON value's type.
type Kind int

const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

func (k Kind) String() string {
	return [...]string{"null", "boolean", "number", "string", "array", "object"}[k]
}

// Get returns the member named key, or nil.
func (v *Value) Get(key string) *Value {
	for _, m := range v.Obj {
		if m.Key == key {
			return m.Val
		}
	}
	return nil
}

// SyntaxError is a document that is not JSON. Its Error is what follows the
// file's name in the message: "is not valid JSON: <why> at offset N".
type SyntaxError struct {
	Msg string // the problem and the byte offset it was found at
}

func (e *SyntaxError) Error() string { return "is not valid JSON: " + e.Msg }

func syntaxAt(msg string, offset int64) *SyntaxError {
	return &SyntaxError{Msg: fmt.Sprintf("%s at offset %d", msg, offset)}
}

// Parse decodes data into a value tree. It returns a *SyntaxError for a
// document that is not one JSON value, and for a duplicate key in an object:
// JSON.parse keeps the last one, which would let a later key silently undo an
// earlier rule.
func Parse(data []byte) (*Value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, syntaxAt("unexpected data after the top-level value", dec.InputOffset())
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (*Value, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, wrapSyntax(err, dec)
	}
	switch t := tok.(type) {
	case nil:
		return &Value{Kind: Null}, nil
	case bool:
		return &Value{Kind: Bool, Bool: t}, nil
	case json.Number:
		return &Value{Kind: Number, Num: t}, nil
	case string:
		return &Value{Kind: String, Str: t}, nil
	case json.Delim:
		switch t {
		case '[':
			v := &Value{Kind: Array, Arr: []*Value{}}
			for dec.More() {
				e, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				v.Arr = append(v.Arr, e)
			}
			_, err := dec.Token()
			return v, wrapSyntax(err, dec)
		case '{':
			v := &Value{Kind: Object}
			seen := map[string]bool{}
			for dec.More() {
				off := dec.InputOffset()
				kt, err := dec.Token()
				if err != nil {
					return nil, wrapSyntax(err, dec)
				}
				key := kt.(string)
				if seen[key] {
					return nil, syntaxAt(fmt.Sprintf("duplicate key %q", key), off)
				}
				seen[key] = true
				e, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				v.Obj = append(v.Obj, Member{Key: key, Val: e})
			}
			_, err := dec.Token()
			return v, wrapSyntax(err, dec)
		}
	}
	return nil, syntaxAt(fmt.Sprintf("unexpected token %v", tok), dec.InputOffset())
}

func wrapSyntax(err error, dec *json.Decoder) error {
	if err == nil {
		return nil
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return syntaxAt(se.Error(), se.Offset)
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return syntaxAt("unexpected end of JSON input", dec.InputOffset())
	}
	return syntaxAt(err.Error(), dec.InputOffset())
}
