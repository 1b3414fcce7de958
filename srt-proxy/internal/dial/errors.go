package dial

import (
	"context"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"strconv"
	"syscall"
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
	return BlockedMessage(e.Host, e.Reason)
}

// BlockedMessage is the body of a resolved-address refusal:
// "Connection to <host> blocked: <reason>".
func BlockedMessage(host, reason string) string {
	return "Connection to " + host + " blocked: " + reason
}

// UnreachableError reports that an allowed destination could not be
// reached: the name did not resolve, every dial failed, the parent proxy
// or the MITM proxy refused or failed the CONNECT, or the upstream's TLS
// certificate did not verify. Failure says which, for the client.
type UnreachableError struct {
	Host string
	Port int
	// Parent is the parent proxy (host:port) that could not be reached or
	// refused the connection; "" when the failure is not the parent's.
	Parent string
	// MITM is the socket of the MITM proxy that could not be reached or
	// refused the connection; "" when the failure is not the MITM proxy's.
	MITM string
	Err  error
}

func (e *UnreachableError) Error() string {
	return "upstream unreachable: " + e.Host + ":" + strconv.Itoa(e.Port) + ": " + e.Err.Error()
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// errNoAddresses is the UnreachableError cause when a name resolves to
// nothing at all.
var errNoAddresses = errors.New("no addresses")

// Failure is why an allowed destination could not be reached, in the
// few kinds a client is told (srt-proxy's refusal header, its CONNECT
// status phrase, its metrics).
type Failure int

const (
	Unreachable           Failure = iota // anything else: no route, a reset, a parent proxy's refusal
	NameNotResolved                      // the name did not resolve, or to no address
	ConnectionRefused                    // nothing accepts on the port
	TimedOut                             // the connection or the TLS handshake took too long
	CertificateNotTrusted                // the upstream's certificate chains to no root the proxy trusts
	CertificateInvalid                   // the upstream's certificate is for another name, expired, …
)

// Failure says which kind of failure e is. Of several addresses that
// failed differently, the more telling kind wins (in the order above,
// from the bottom).
func (e *UnreachableError) Failure() Failure {
	var dnsErr *net.DNSError
	var netErr net.Error
	if f, _ := certFailure(e.Err); f != Unreachable {
		return f
	}
	switch {
	case errors.Is(e.Err, errNoAddresses), errors.As(e.Err, &dnsErr):
		return NameNotResolved
	case errors.Is(e.Err, syscall.ECONNREFUSED):
		return ConnectionRefused
	case errors.Is(e.Err, context.DeadlineExceeded), errors.Is(e.Err, os.ErrDeadlineExceeded),
		errors.Is(e.Err, syscall.ETIMEDOUT), errors.As(e.Err, &netErr) && netErr.Timeout():
		return TimedOut
	}
	return Unreachable
}

// Detail is what a client may be told about e beyond its kind, or "": the
// certificate's fault for a TLS failure, the system's word for anything
// else (no route to host, connection reset by peer), or the parent
// proxy's or the MITM proxy's answer. It names no address of the proxy's
// own network (a resolver's, a failed address's).
func (e *UnreachableError) Detail() string {
	var errno syscall.Errno
	if f, why := certFailure(e.Err); f != Unreachable {
		return why
	}
	switch {
	case e.Failure() != Unreachable:
		return ""
	case (e.Parent != "" || e.MITM != "") && errors.Unwrap(e.Err) != nil:
		return errors.Unwrap(e.Err).Error() // `refused CONNECT: "HTTP/1.1 403 Forbidden"`, …
	case errors.As(e.Err, &errno):
		return errno.Error()
	}
	return ""
}

// certFailure is the kind and the text of a certificate that did not
// verify; Unreachable when err is no such failure.
func certFailure(err error) (Failure, string) {
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &unknown):
		return CertificateNotTrusted, unknown.Error()
	case errors.As(err, &hostname):
		return CertificateInvalid, hostname.Error()
	case errors.As(err, &invalid):
		return CertificateInvalid, invalid.Error()
	}
	return Unreachable, ""
}
