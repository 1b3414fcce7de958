package protocol

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The srt.mask.v1 extension (docs/decider-protocol.md, "The srt.mask.v1
// extension"): the decider gives the proxy masked secrets (Masks) and
// names, in the allow of each http request, those the proxy puts back in
// it (Allow.Inject).

// Limits of srt.mask.v1.
const (
	MaxMaskID       = 64      // bytes of a mask id, and of an aws pair's name
	MinSentinel     = 16      // bytes of a sentinel, at least
	MaxSentinel     = 8 << 10 // bytes of a sentinel, at most
	MaxMaskValue    = 64 << 10
	ReasonBadMasks  = "bad masks frame"
	reasonTwice     = "mask id %s given twice"
	reasonOverlap   = "sentinel of mask %s overlaps mask %s"
	reasonAWSTwice  = "aws pair %s has two masks of role %s"
	reasonUnknownIn = "inject names unknown mask %s"
	reasonUnknownDr = "drop names unknown mask %s"
)

// Exts are the extensions in force on a link: those both hellos agreed on
// or, for the decider's hello, those the proxy offered.
type Exts struct {
	SRT  bool // srt.v1
	Mask bool // srt.mask.v1; only with SRT
}

// DecodeDeciderMessageExts is DecodeDeciderMessage for a link whose
// extensions are x: with x.Mask, a *Masks may come, an allow may carry
// inject and (for a hello) srt.mask.v1 may be accepted.
func DecodeDeciderMessageExts(b []byte, x Exts) (Message, error) {
	return decodeDeciderMessage(b, x)
}

// IsMaskReason reports whether reason is one of srt.mask.v1's link
// reasons, which name the masks at fault ("mask id X given twice", …).
func IsMaskReason(reason string) bool {
	for _, f := range []string{reasonTwice, reasonOverlap, reasonAWSTwice, reasonUnknownIn, reasonUnknownDr} {
		head, _, _ := strings.Cut(f, "%s")
		if strings.HasPrefix(reason, head) {
			return true
		}
	}
	return false
}

// maskID: 1–64 bytes of [A-Za-z0-9._-] (a mask's id, an aws pair's name).
func maskID(s string) bool {
	if s == "" || len(s) > MaxMaskID {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// sentinel: 16–8192 bytes of [A-Za-z0-9._~+/=-], which no encoding a
// client may put it through (URL, form, JSON, base64) changes.
func sentinel(s string) bool {
	if len(s) < MinSentinel || len(s) > MaxSentinel {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("._~+/=-", c) >= 0) {
			return false
		}
	}
	return true
}

func checkMaskIDs(field string, ids []string) error {
	if len(ids) == 0 {
		return fmt.Errorf("%s is present but empty", field)
	}
	for i, id := range ids {
		if !maskID(id) {
			return fmt.Errorf("%s[%d] is not 1..%d bytes of [A-Za-z0-9._-]", field, i, MaxMaskID)
		}
	}
	return unique(field, ids)
}

func checkMask(i int, m *Mask) error {
	switch {
	case !maskID(m.ID):
		return fmt.Errorf("masks[%d].id is not 1..%d bytes of [A-Za-z0-9._-]", i, MaxMaskID)
	case !sentinel(m.Sentinel):
		return fmt.Errorf("masks[%d].sentinel is not %d..%d bytes of [A-Za-z0-9._~+/=-]", i, MinSentinel, MaxSentinel)
	case m.Value == "" || len(m.Value) > MaxMaskValue || !utf8.ValidString(m.Value) || strings.IndexByte(m.Value, 0) >= 0:
		// The value itself is never in an error.
		return fmt.Errorf("masks[%d].value is not 1..%d bytes of UTF-8 without NUL", i, MaxMaskValue)
	case m.AWS == nil:
		return nil
	case !maskID(m.AWS.Pair):
		return fmt.Errorf("masks[%d].aws.pair is not 1..%d bytes of [A-Za-z0-9._-]", i, MaxMaskID)
	case m.AWS.Role != AWSAccessKeyID && m.AWS.Role != AWSSecretAccessKey && m.AWS.Role != AWSSessionToken:
		return fmt.Errorf("masks[%d].aws.role is not %s, %s or %s", i, AWSAccessKeyID, AWSSecretAccessKey, AWSSessionToken)
	}
	return nil
}

// checkMasks: the rules of one masks message alone ("bad masks frame");
// those between its masks and the link's are MaskTable's.
func checkMasks(m *Masks) error {
	if (m.Masks == nil) == (m.Drop == nil) {
		return errors.New("a masks message has masks or drop, exactly one")
	}
	if m.Drop != nil {
		return checkMaskIDs("drop", m.Drop)
	}
	if len(m.Masks) == 0 {
		return errors.New("masks is present but empty")
	}
	for i := range m.Masks {
		if err := checkMask(i, &m.Masks[i]); err != nil {
			return err
		}
	}
	return nil
}

// MaskTable is the masks of one link: those live, and the id of every mask
// ever given (an id is given once for the link's life). Both ends keep
// one: the proxy to resolve an allow's inject, the decider to send only
// what the proxy accepts. It is not safe for concurrent use.
type MaskTable struct {
	live  map[string]*Mask
	order []string // live ids, oldest first (the overlap check's order)
	given map[string]bool
}

// NewMaskTable returns an empty table.
func NewMaskTable() *MaskTable {
	return &MaskTable{live: map[string]*Mask{}, given: map[string]bool{}}
}

// Len is the number of live masks.
func (t *MaskTable) Len() int { return len(t.live) }

// Apply puts a masks message (valid as Encode and the decoders check it)
// in force: its masks become live, or its drop forgets them. A violation
// is a *ProtocolError whose Reason names the masks at fault, and the
// table is then unchanged:
//
//   - "mask id X given twice": X is live, was dropped, or comes twice;
//   - "sentinel of mask X overlaps mask Y": one's sentinel is a substring
//     of the other's (or equal);
//   - "aws pair P has two masks of role R";
//   - "drop names unknown mask X": X is not live.
func (t *MaskTable) Apply(m *Masks) error {
	if m.Drop != nil {
		for _, id := range m.Drop {
			if t.live[id] == nil {
				return violation(fmt.Sprintf(reasonUnknownDr, id), "")
			}
		}
		for _, id := range m.Drop {
			delete(t.live, id)
		}
		kept := t.order[:0]
		for _, id := range t.order {
			if t.live[id] != nil {
				kept = append(kept, id)
			}
		}
		t.order = kept
		return nil
	}
	if err := t.check(m.Masks); err != nil {
		return err
	}
	for i := range m.Masks {
		mk := m.Masks[i]
		t.live[mk.ID] = &mk
		t.given[mk.ID] = true
		t.order = append(t.order, mk.ID)
	}
	return nil
}

// check judges masks against the live ones and each other.
func (t *MaskTable) check(masks []Mask) error {
	for i := range masks {
		m := &masks[i]
		if t.given[m.ID] {
			return violation(fmt.Sprintf(reasonTwice, m.ID), "")
		}
		others := func(f func(o *Mask) error) error {
			for _, id := range t.order {
				if err := f(t.live[id]); err != nil {
					return err
				}
			}
			for j := range masks[:i] {
				if err := f(&masks[j]); err != nil {
					return err
				}
			}
			return nil
		}
		err := others(func(o *Mask) error {
			switch {
			case o.ID == m.ID:
				return violation(fmt.Sprintf(reasonTwice, m.ID), "")
			case overlaps(m.Sentinel, o.Sentinel):
				return violation(fmt.Sprintf(reasonOverlap, m.ID, o.ID), "")
			case m.AWS != nil && o.AWS != nil && *m.AWS == *o.AWS:
				return violation(fmt.Sprintf(reasonAWSTwice, m.AWS.Pair, m.AWS.Role), "")
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// overlaps reports whether one of a and b holds the other: the proxy could
// not tell which secret a request carries.
func overlaps(a, b string) bool {
	if len(a) < len(b) {
		a, b = b, a
	}
	return strings.Contains(a, b)
}

// Resolve returns the live masks an allow's inject names, in its order;
// an id that is not live is a *ProtocolError ("inject names unknown mask
// X").
func (t *MaskTable) Resolve(inject []string) ([]Mask, error) {
	if inject == nil {
		return nil, nil
	}
	out := make([]Mask, 0, len(inject))
	for _, id := range inject {
		m := t.live[id]
		if m == nil {
			return nil, violation(fmt.Sprintf(reasonUnknownIn, id), "")
		}
		out = append(out, *m)
	}
	return out, nil
}

// Live returns the live mask id, if any.
func (t *MaskTable) Live(id string) (Mask, bool) {
	if m := t.live[id]; m != nil {
		return *m, true
	}
	return Mask{}, false
}

func decodeMasks(o jsonValue) (*Masks, error) {
	m := &Masks{}
	err := eachField(o, func(k string, v jsonValue) (err error) {
		switch k {
		case "masks":
			m.Masks, err = maskList(v)
		case "drop":
			m.Drop, err = stringList(k, v)
		default:
			err = unknownKey(k)
		}
		return err
	})
	if err == nil {
		err = checkMasks(m)
	}
	return m, err
}

func maskList(v jsonValue) ([]Mask, error) {
	if v.kind != jsonArray {
		return nil, fmt.Errorf("masks is a %s", v.kind)
	}
	list := make([]Mask, 0, len(v.elems))
	for i, e := range v.elems {
		if e.kind != jsonObject {
			return nil, fmt.Errorf("masks[%d] is a %s", i, e.kind)
		}
		var m Mask
		var id, sent, val bool
		err := eachField(e, func(k string, v jsonValue) (err error) {
			switch k {
			case "id":
				id = true
				m.ID, err = strField(k, v)
			case "sentinel":
				sent = true
				m.Sentinel, err = strField(k, v)
			case "value":
				val = true
				m.Value, err = strField(k, v)
			case "aws":
				m.AWS, err = awsRole(v)
			default:
				err = unknownKey(k)
			}
			return err
		})
		switch {
		case err != nil:
			return nil, fmt.Errorf("masks[%d]: %w", i, err)
		case !id:
			return nil, fmt.Errorf("masks[%d]: %w", i, missing("id"))
		case !sent:
			return nil, fmt.Errorf("masks[%d]: %w", i, missing("sentinel"))
		case !val:
			return nil, fmt.Errorf("masks[%d]: %w", i, missing("value"))
		}
		list = append(list, m)
	}
	return list, nil
}

func awsRole(v jsonValue) (*AWSRole, error) {
	if v.kind != jsonObject {
		return nil, fmt.Errorf("aws is a %s", v.kind)
	}
	a := &AWSRole{}
	var pair, role bool
	err := eachField(v, func(k string, v jsonValue) (err error) {
		switch k {
		case "pair":
			pair = true
			a.Pair, err = strField(k, v)
		case "role":
			role = true
			a.Role, err = strField(k, v)
		default:
			err = unknownKey(k)
		}
		return err
	})
	switch {
	case err != nil:
	case !pair:
		err = missing("aws.pair")
	case !role:
		err = missing("aws.role")
	}
	return a, err
}

func appendMasks(b []byte, m *Masks) []byte {
	b = appendHead(b, TypeMasks)
	if m.Drop != nil {
		b = appendStrings(appendKey(b, "drop"), m.Drop)
		return append(b, '}')
	}
	b = append(appendKey(b, "masks"), '[')
	for i := range m.Masks {
		mk := &m.Masks[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		b = appendString(appendKey(b, "id"), mk.ID)
		b = appendString(appendKey(b, "sentinel"), mk.Sentinel)
		b = appendString(appendKey(b, "value"), mk.Value)
		if mk.AWS != nil {
			b = append(appendKey(b, "aws"), '{')
			b = appendString(appendKey(b, "pair"), mk.AWS.Pair)
			b = appendString(appendKey(b, "role"), mk.AWS.Role)
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	return append(b, ']', '}')
}
