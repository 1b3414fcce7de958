package dial

import (
	"errors"
	"strconv"

	"github.com/srt-sandbox/decider/policy"
)

// AddressRefusedError reports that every address a hostname resolved to was
// refused by the resolved-address policy, so nothing was dialled. It is a
// policy refusal, not a network failure.
type AddressRefusedError struct {
	Host string // the canonical destination host
	Port int
	// Reason is the refusal phrase, "resolved to <class>[ / <class>…]"; it
	// names address classes, never the addresses themselves.
	Reason string
}

// Error is the reference's refusal text, "Connection to <host> blocked:
// resolved to <class>".
func (e *AddressRefusedError) Error() string {
	return policy.BlockedMessage(e.Host, e.Reason)
}

// UnreachableError reports that an allowed destination could not be
// reached: the name did not resolve, every dial failed, or the parent proxy
// refused or failed the CONNECT.
type UnreachableError struct {
	Host string
	Port int
	Err  error
}

func (e *UnreachableError) Error() string {
	return "upstream unreachable: " + e.Host + ":" + strconv.Itoa(e.Port) + ": " + e.Err.Error()
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// errNoAddresses is the UnreachableError cause when a name resolves to
// nothing at all.
var errNoAddresses = errors.New("no addresses")
