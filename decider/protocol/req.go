package protocol

import "strings"

// HeaderField is one header line of a request as it arrived.
type HeaderField struct {
	Name, Value string
}

// CollectHeaders turns a request's header lines into a req's hostHeader
// and headers: names lower-cased, values in arrival order (names in order
// of first arrival), the Host header taken out. It refuses, as the proxy
// does before asking, a name that is not a token or a value with a control
// character (RefuseBadHeader) and, after that, two Host headers
// (RefuseTwoHostHeaders). The error is an *UnaskableError.
func CollectHeaders(fields []HeaderField) (hostHeader *string, headers Headers, err error) {
	hosts := 0
	index := map[string]int{}
	for _, f := range fields {
		name := strings.ToLower(f.Name)
		if !isToken(name) || headerValue(name, f.Value) != nil {
			return nil, nil, &UnaskableError{Reason: RefuseBadHeader}
		}
		if name == "host" {
			hosts++
			v := f.Value
			hostHeader = &v
			continue
		}
		if i, ok := index[name]; ok {
			headers[i].Values = append(headers[i].Values, f.Value)
			continue
		}
		index[name] = len(headers)
		headers = append(headers, Header{Name: name, Values: []string{f.Value}})
	}
	if hosts > 1 {
		return nil, nil, &UnaskableError{Reason: RefuseTwoHostHeaders}
	}
	return hostHeader, headers, nil
}

// ValidateReq reports whether the proxy may ask the decider about r: nil,
// or an *UnaskableError whose Reason is the body of the proxy's 400 answer
// (docs/decider-protocol.md, "What the proxy checks before asking"). The
// checks run in the reference's order: header names and values, header
// size, empty or out-of-range fields, target sizes, the other fields'
// characters, and last the whole req, which must fit in MaxFrame at the
// largest id. r.ID is not looked at; a req that passes encodes with any
// valid id.
func ValidateReq(r *Req) error {
	if refuse, err := checkReq(r); err != nil {
		return &UnaskableError{Reason: refuse}
	}
	atMax := *r
	atMax.ID = MaxID
	if len(appendReq(nil, &atMax)) > MaxFrame {
		return &UnaskableError{Reason: RefuseTooLarge}
	}
	return nil
}
