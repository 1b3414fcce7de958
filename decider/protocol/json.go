package protocol

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// A strict JSON reader. encoding/json accepts duplicate keys and lone
// surrogates and reads numbers loosely, so the codec parses frames itself
// into this small tree and then maps the tree onto the message structs.

type jsonKind uint8

const (
	jsonNull jsonKind = iota
	jsonBool
	jsonNumber
	jsonString
	jsonArray
	jsonObject
)

var jsonKindNames = [...]string{"null", "boolean", "number", "string", "array", "object"}

func (k jsonKind) String() string { return jsonKindNames[k] }

type jsonValue struct {
	kind   jsonKind
	text   string // a string's value, a number's literal
	b      bool
	elems  []jsonValue
	fields []jsonField // in document order
}

type jsonField struct {
	key   string
	value jsonValue
}

// maxDepth bounds nesting; no message nests more than three levels
// (object → headers object → values array).
const maxDepth = 32

type jsonParser struct {
	s     []byte
	pos   int
	depth int
	deep  bool
	// The first null or lone surrogate in document order, and whether an
	// object repeats a key; reported only once the whole frame parses.
	firstBad string
	dup      bool
}

// parseFrame reads one frame as a JSON object, in the order of precedence:
// UTF-8, syntax, one object, null or lone surrogate, duplicate key.
func parseFrame(b []byte) (jsonValue, *ProtocolError) {
	if !utf8.Valid(b) {
		return jsonValue{}, violation(ReasonNotUTF8, "")
	}
	p := jsonParser{s: b}
	p.space()
	v, ok := p.value()
	if ok {
		p.space()
		ok = p.pos == len(p.s)
	}
	switch {
	case p.deep:
		return jsonValue{}, violation(ReasonTooDeep, "")
	case !ok:
		return jsonValue{}, violation(ReasonNotJSON, "at byte "+itoa(uint64(p.pos)))
	case v.kind != jsonObject:
		return jsonValue{}, violation(ReasonNotObject, "the frame is a "+v.kind.String())
	case p.firstBad != "":
		return jsonValue{}, violation(p.firstBad, "")
	case p.dup:
		return jsonValue{}, violation(ReasonDuplicateKey, "")
	}
	return v, nil
}

func (p *jsonParser) bad(reason string) {
	if p.firstBad == "" {
		p.firstBad = reason
	}
}

func (p *jsonParser) space() {
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsonParser) literal(word string) bool {
	if !strings.HasPrefix(string(p.s[p.pos:min(len(p.s), p.pos+len(word))]), word) {
		return false
	}
	p.pos += len(word)
	return true
}

func (p *jsonParser) value() (jsonValue, bool) {
	if p.pos >= len(p.s) {
		return jsonValue{}, false
	}
	switch c := p.s[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, ok := p.str()
		return jsonValue{kind: jsonString, text: s}, ok
	case c == 't':
		return jsonValue{kind: jsonBool, b: true}, p.literal("true")
	case c == 'f':
		return jsonValue{kind: jsonBool}, p.literal("false")
	case c == 'n':
		p.bad(ReasonNull)
		return jsonValue{kind: jsonNull}, p.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return p.number()
	}
	return jsonValue{}, false
}

func (p *jsonParser) enter() bool {
	p.depth++
	if p.depth > maxDepth {
		p.deep = true
		return false
	}
	p.pos++ // the '{' or '['
	p.space()
	return true
}

func (p *jsonParser) object() (jsonValue, bool) {
	if !p.enter() {
		return jsonValue{}, false
	}
	defer func() { p.depth-- }()
	v := jsonValue{kind: jsonObject}
	if p.pos < len(p.s) && p.s[p.pos] == '}' {
		p.pos++
		return v, true
	}
	var seen map[string]bool
	for {
		if p.pos >= len(p.s) || p.s[p.pos] != '"' {
			return v, false
		}
		key, ok := p.str()
		if !ok {
			return v, false
		}
		if p.repeats(v.fields, &seen, key) {
			p.dup = true
		}
		p.space()
		if p.pos >= len(p.s) || p.s[p.pos] != ':' {
			return v, false
		}
		p.pos++
		p.space()
		val, ok := p.value()
		if !ok {
			return v, false
		}
		v.fields = append(v.fields, jsonField{key, val})
		p.space()
		if p.pos >= len(p.s) {
			return v, false
		}
		switch p.s[p.pos] {
		case ',':
			p.pos++
			p.space()
		case '}':
			p.pos++
			return v, true
		default:
			return v, false
		}
	}
}

// repeats reports whether key is already among fields: a scan while the
// object is small, a set once it is not.
func (p *jsonParser) repeats(fields []jsonField, seen *map[string]bool, key string) bool {
	const small = 16
	if len(fields) < small {
		for _, f := range fields {
			if f.key == key {
				return true
			}
		}
		return false
	}
	if *seen == nil {
		*seen = make(map[string]bool, 2*small)
		for _, f := range fields {
			(*seen)[f.key] = true
		}
	}
	if (*seen)[key] {
		return true
	}
	(*seen)[key] = true
	return false
}

func (p *jsonParser) array() (jsonValue, bool) {
	if !p.enter() {
		return jsonValue{}, false
	}
	defer func() { p.depth-- }()
	v := jsonValue{kind: jsonArray}
	if p.pos < len(p.s) && p.s[p.pos] == ']' {
		p.pos++
		return v, true
	}
	for {
		el, ok := p.value()
		if !ok {
			return v, false
		}
		v.elems = append(v.elems, el)
		p.space()
		if p.pos >= len(p.s) {
			return v, false
		}
		switch p.s[p.pos] {
		case ',':
			p.pos++
			p.space()
		case ']':
			p.pos++
			return v, true
		default:
			return v, false
		}
	}
}

// number checks RFC 8259's grammar and keeps the literal; integer fields
// judge it later.
func (p *jsonParser) number() (jsonValue, bool) {
	start := p.pos
	digits := func() int {
		n := 0
		for p.pos < len(p.s) && '0' <= p.s[p.pos] && p.s[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.s[p.pos] == '-' {
		p.pos++
	}
	if p.pos < len(p.s) && p.s[p.pos] == '0' {
		p.pos++
	} else if digits() == 0 {
		return jsonValue{}, false
	}
	if p.pos < len(p.s) && p.s[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return jsonValue{}, false
		}
	}
	if p.pos < len(p.s) && (p.s[p.pos] == 'e' || p.s[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.s) && (p.s[p.pos] == '+' || p.s[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return jsonValue{}, false
		}
	}
	return jsonValue{kind: jsonNumber, text: string(p.s[start:p.pos])}, true
}

// str reads a string at p.pos (its opening quote). The frame is valid
// UTF-8 already; a lone surrogate escape becomes U+FFFD and is recorded.
func (p *jsonParser) str() (string, bool) {
	p.pos++
	start := p.pos
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		if c == '"' {
			s := string(p.s[start:p.pos])
			p.pos++
			return s, true
		}
		if c == '\\' || c < 0x20 {
			break
		}
		p.pos++
	}
	var b strings.Builder
	b.Write(p.s[start:p.pos])
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		switch {
		case c == '"':
			p.pos++
			return b.String(), true
		case c < 0x20:
			return "", false
		case c != '\\':
			b.WriteByte(c)
			p.pos++
			continue
		}
		p.pos++
		if p.pos >= len(p.s) {
			return "", false
		}
		e := p.s[p.pos]
		p.pos++
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", false
			}
			if utf16.IsSurrogate(r) {
				r = p.pair(r)
			}
			b.WriteRune(r)
		default:
			return "", false
		}
	}
	return "", false
}

// pair completes the surrogate r with a following \uDC00–\uDFFF escape, or
// records a lone surrogate.
func (p *jsonParser) pair(r rune) rune {
	if r < 0xdc00 && p.pos+6 <= len(p.s) && p.s[p.pos] == '\\' && p.s[p.pos+1] == 'u' {
		save := p.pos
		p.pos += 2
		if lo, ok := p.hex4(); ok && 0xdc00 <= lo && lo <= 0xdfff {
			return utf16.DecodeRune(r, lo)
		}
		p.pos = save
	}
	p.bad(ReasonLoneSurrogate)
	return utf8.RuneError
}

func (p *jsonParser) hex4() (rune, bool) {
	if p.pos+4 > len(p.s) {
		return 0, false
	}
	var r rune
	for _, c := range p.s[p.pos : p.pos+4] {
		r <<= 4
		switch {
		case '0' <= c && c <= '9':
			r |= rune(c - '0')
		case 'a' <= c && c <= 'f':
			r |= rune(c - 'a' + 10)
		case 'A' <= c && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	p.pos += 4
	return r, true
}
