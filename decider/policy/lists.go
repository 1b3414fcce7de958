package policy

import (
	"errors"
	"maps"
	"slices"
	"strconv"
)

// EmptyReasonMessage is the reference's (zod's) message for an empty
// deniedDomainReasons value.
const EmptyReasonMessage = "String must contain at least 1 character(s)"

// Field names FieldError uses, as they appear under "network." in settings.
const (
	FieldAllowedDomains      = "allowedDomains"
	FieldDeniedDomains       = "deniedDomains"
	FieldDeniedDomainReasons = "deniedDomainReasons"
)

// FieldError is one invalid entry found by ParseLists.
type FieldError struct {
	Field string // FieldAllowedDomains, FieldDeniedDomains or FieldDeniedDomainReasons
	Index int    // position in the list; -1 for deniedDomainReasons
	Key   string // the deniedDomainReasons key; "" for the lists
	Err   error  // *PatternError, or an error with EmptyReasonMessage
}

// Path is the entry's path below "network.", e.g. "allowedDomains.3" or
// "deniedDomainReasons.evil.example.org".
func (e FieldError) Path() string {
	if e.Index < 0 {
		return e.Field + "." + e.Key
	}
	return e.Field + "." + strconv.Itoa(e.Index)
}

func (e FieldError) Error() string { return e.Path() + ": " + e.Err.Error() }
func (e FieldError) Unwrap() error { return e.Err }

// errEmptyReason is the error of an empty deniedDomainReasons value.
var errEmptyReason = errors.New(EmptyReasonMessage)

// ParseLists validates network.allowedDomains, network.deniedDomains and
// network.deniedDomainReasons and returns the Lists, or every invalid entry
// (lists in order, then reasons by key). A reasons key that names no
// deniedDomains entry is valid; it never fires. The reasons map is copied.
func ParseLists(allowed, denied []string, reasons map[string]string, strict bool) (*Lists, []FieldError) {
	var errs []FieldError
	l := &Lists{Strict: strict, DeniedReasons: maps.Clone(reasons)}
	for i, s := range allowed {
		p, err := ParseAllowPattern(s)
		if err != nil {
			errs = append(errs, FieldError{Field: FieldAllowedDomains, Index: i, Err: err})
			continue
		}
		l.Allowed = append(l.Allowed, p)
	}
	for i, s := range denied {
		p, err := ParseDenyPattern(s)
		if err != nil {
			errs = append(errs, FieldError{Field: FieldDeniedDomains, Index: i, Err: err})
			continue
		}
		l.Denied = append(l.Denied, p)
	}
	for _, k := range slices.Sorted(maps.Keys(reasons)) {
		if reasons[k] == "" {
			errs = append(errs, FieldError{Field: FieldDeniedDomainReasons, Index: -1, Key: k, Err: errEmptyReason})
		}
	}
	if errs != nil {
		return nil, errs
	}
	return l, nil
}
