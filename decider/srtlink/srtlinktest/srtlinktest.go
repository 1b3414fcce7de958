// Package srtlinktest reads the conformance vectors of package srtlink
// (shared/srtlink; its README.md describes them) for the tests of every
// program that speaks the contracts: srtlink's own, srt's and
// srt-proxy's. Each test runs the same cases against its side.
package srtlinktest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/srt-sandbox/decider/srtlink"
)

// HandoffCase is one line of the handoff channel.
type HandoffCase struct {
	Name string `json:"name"`
	Note string `json:"note"`
	// From is the sender: "srt" or "srt-proxy".
	From string `json:"from"`
	// Message is what the line says.
	Message srtlink.Message `json:"message"`
	// Line is the line's bytes, without the newline.
	Line string `json:"line"`
	// Canonical, when not "", is Message as srtlink.Encode writes it:
	// Line is then another spelling a receiver reads as Message. When ""
	// Line is canonical.
	Canonical string `json:"canonical"`
	// FDs is how many descriptors ride along with the line.
	FDs int `json:"fds"`
}

// Encoded is the line a sender writes for c.Message, without the newline.
func (c HandoffCase) Encoded() string {
	if c.Canonical != "" {
		return c.Canonical
	}
	return c.Line
}

// FlagsCase is one command line of srt-proxy's srt mode.
type FlagsCase struct {
	Name string `json:"name"`
	Note string `json:"note"`
	// Flags is what Argv says; nil when Argv is refused.
	Flags *srtlink.ProxyFlags `json:"flags"`
	// Argv is the command line without the program name: for a Flags
	// case, exactly what Flags.Args gives.
	Argv []string `json:"argv"`
	// Error is why srtlink.ParseProxyFlags refuses Argv; srt-proxy prints
	// it after "srt-proxy: " and exits 2.
	Error string `json:"error"`
}

// KeyCase is an attribution key and what it becomes.
type KeyCase struct {
	Name  string `json:"name"`
	Note  string `json:"note"`
	Key   string `json:"key"`
	Label string `json:"label"` // srtlink.KeyLabel
	User  string `json:"user"`  // srtlink.UserFor
}

// UserCase is a proxy user name and the label the decider reads in it.
type UserCase struct {
	Name  string `json:"name"`
	Note  string `json:"note"`
	User  string `json:"user"`
	Label string `json:"label"` // srtlink.UserLabel
}

// Dir is shared/srtlink of the checkout holding the test's working
// directory, found by walking up to go.work.
func Dir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return filepath.Join(dir, "shared", "srtlink")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("no go.work above the working directory: the vectors are in the repository's shared/srtlink")
		}
		dir = parent
	}
}

// Handoff are the cases of handoff.json.
func Handoff(tb testing.TB) []HandoffCase {
	var cases []HandoffCase
	load(tb, "handoff.json", &cases)
	return cases
}

// Flags are the cases of flags.json.
func Flags(tb testing.TB) []FlagsCase {
	var cases []FlagsCase
	load(tb, "flags.json", &cases)
	return cases
}

// Keys and Users are the cases of users.json.
func Keys(tb testing.TB) []KeyCase { return users(tb).Keys }

// Users: see Keys.
func Users(tb testing.TB) []UserCase { return users(tb).Users }

func users(tb testing.TB) (v struct {
	Keys  []KeyCase  `json:"keys"`
	Users []UserCase `json:"users"`
}) {
	load(tb, "users.json", &v)
	return v
}

// load decodes a file strictly: a field a case should not have is a
// mistake in the file, not something to pass over.
func load(tb testing.TB, name string, v any) {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(Dir(tb), name))
	if err != nil {
		tb.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		tb.Fatalf("shared/srtlink/%s: %v", name, err)
	}
}
