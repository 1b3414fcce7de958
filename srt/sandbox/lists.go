//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/srt-sandbox/decider/policy"
)

// MinCommandIDLength is the shortest id a command's own network list may
// be registered under: the id travels in the proxy username, so it must
// not be guessable by another command.
const MinCommandIDLength = 22

// ErrCommandID is returned for a command id too short to register under.
var ErrCommandID = errors.New("registerCommandNetworkLists: commandId must be a string of at least 22 characters, unpaired surrogates not counted. It carries the command's own allow list, so it must not be guessable")

// RegisterCommandNetwork gives the command started with WithCommandID(id)
// its own allowedDomains, consulted after the settings' lists when neither
// decides (never under strictAllowlist). Registering again replaces the
// list. The entries are validated as allowedDomains are.
func (m *Manager) RegisterCommandNetwork(id string, allowedDomains []string) error {
	if countUnits(id) < MinCommandIDLength {
		return ErrCommandID
	}
	for _, e := range allowedDomains {
		if _, err := policy.ParseAllowPattern(e); err != nil {
			return fmt.Errorf("registerCommandNetworkLists: invalid allowedDomains entry %q. %s: %w", e, err, ErrInvalidConfig)
		}
	}
	m.noteExternalLists()
	m.net.regMu.Lock()
	defer m.net.regMu.Unlock()
	m.net.mu.Lock()
	if m.net.lists == nil {
		m.net.lists = map[string][]string{}
	}
	m.net.lists[id] = append([]string(nil), allowedDomains...)
	eg := m.net.eg
	m.net.mu.Unlock()
	if eg != nil {
		return eg.Register(id, allowedDomains)
	}
	return nil
}

// UnregisterCommandNetwork removes a command's own list; an id with none is
// ignored.
func (m *Manager) UnregisterCommandNetwork(id string) error {
	m.net.regMu.Lock()
	defer m.net.regMu.Unlock()
	m.net.mu.Lock()
	delete(m.net.lists, id)
	eg := m.net.eg
	m.net.mu.Unlock()
	if eg != nil {
		return eg.Unregister(id)
	}
	return nil
}

// countUnits counts UTF-16 units, unpaired surrogates (invalid UTF-8 in
// Go) not counted.
func countUnits(s string) int {
	n := 0
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		s = s[size:]
		if r == utf8.RuneError && size == 1 {
			continue // a byte of an unpaired surrogate or other invalid UTF-8
		}
		n += len(utf16.Encode([]rune{r}))
	}
	return n
}
