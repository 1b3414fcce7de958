package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt-proxy/internal/mitm"
)

// openFD wraps an inherited descriptor. It is made non-blocking first, so
// that reads wait in Go's poller and closing the file ends them (a blocked
// read(2) would outlive Close).
func openFD(fd int, name string) *os.File {
	unix.SetNonblock(fd, true)
	return os.NewFile(uintptr(fd), name)
}

// deciderStream is the stream to the decider: one socket, or a pair of
// one-way streams (pipes).
func deciderStream(in, out int) io.ReadWriteCloser {
	if in == out {
		return openFD(in, "decider")
	}
	return &pipePair{in: openFD(in, "decider-in"), out: openFD(out, "decider-out")}
}

// pipePair is a decider reached by two one-way streams.
type pipePair struct{ in, out *os.File }

func (p *pipePair) Read(b []byte) (int, error)  { return p.in.Read(b) }
func (p *pipePair) Write(b []byte) (int, error) { return p.out.Write(b) }
func (p *pipePair) Close() error                { return errors.Join(p.in.Close(), p.out.Close()) }

// fdListener turns an inherited descriptor into a listener; it must be a
// listening stream socket.
func fdListener(fd int) (net.Listener, error) {
	accepting, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN)
	switch {
	case errors.Is(err, unix.ENOTSOCK):
		return nil, fmt.Errorf("fd %d is not a socket", fd)
	case err != nil:
		return nil, fmt.Errorf("fd %d: %w", fd, err)
	case accepting == 0:
		return nil, fmt.Errorf("fd %d is not a listening socket", fd)
	}
	f := os.NewFile(uintptr(fd), "listener")
	ln, err := net.FileListener(f) // a duplicate; the original is closed below
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("fd %d: %w", fd, err)
	}
	return ln, nil
}

// watchLifeline reads the lifeline until it ends (data on it is ignored)
// and then says why on stop: its end of file, or an error reading it.
func watchLifeline(f *os.File, stop chan<- string) {
	buf := make([]byte, 512)
	for {
		_, err := f.Read(buf)
		if err == nil {
			continue
		}
		if errors.Is(err, io.EOF) {
			stop <- "lifeline closed"
		} else {
			stop <- "lifeline error"
		}
		return
	}
}

// maxCAPEM bounds what --ca-fd may carry.
const maxCAPEM = 1 << 20

var (
	caKeyBlock  = regexp.MustCompile(`-----BEGIN (?:RSA )?PRIVATE KEY-----[\s\S]+?-----END (?:RSA )?PRIVATE KEY-----`)
	caCertBlock = regexp.MustCompile(`-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----`)
)

// errCAIncomplete is the reference's refusal of a --ca-fd PEM without a
// key or a certificate.
var errCAIncomplete = errors.New("proxy-only: the CA PEM needs a private key and a certificate")

// readCA reads the TLS-termination CA from fd to its end: a private key
// block ("PRIVATE KEY" or "RSA PRIVATE KEY", as the reference looks for)
// and a certificate block, which must make a CA that can sign now.
func readCA(fd int) (*mitm.CA, error) {
	f := os.NewFile(uintptr(fd), "ca")
	defer f.Close()
	pem, err := io.ReadAll(io.LimitReader(f, maxCAPEM+1))
	if err != nil {
		return nil, fmt.Errorf("proxy-only: reading the CA PEM: %w", err)
	}
	if len(pem) > maxCAPEM {
		return nil, errors.New("proxy-only: the CA PEM is over 1 MiB")
	}
	key, cert := caKeyBlock.Find(pem), caCertBlock.Find(pem)
	if key == nil || cert == nil {
		return nil, errCAIncomplete
	}
	ca, err := mitm.NewCA(append(cert, '\n'), append(key, '\n'))
	if err != nil {
		var ce *mitm.CAError
		if errors.As(err, &ce) {
			return nil, errors.New("proxy-only: " + ce.Reason)
		}
		return nil, fmt.Errorf("proxy-only: %w", err)
	}
	return ca, nil
}
