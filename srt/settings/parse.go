package settings

import (
	"strings"
)

// InvalidError lists every problem in a settings document.
type InvalidError struct {
	Issues []Issue
}

func (e *InvalidError) Error() string {
	parts := make([]string, len(e.Issues))
	for i, is := range e.Issues {
		parts[i] = is.String()
	}
	return "does not hold a valid config — " + strings.Join(parts, "; ")
}

// Is makes every InvalidError match ErrInvalid.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

// SyntaxError is a document that is not JSON.
type SyntaxError struct {
	Msg string
}

func (e *SyntaxError) Error() string { return "is not valid JSON: " + e.Msg }

// Parse validates a settings document. It returns *SyntaxError or
// *InvalidError; an InvalidError lists every problem found, not the first.
func Parse(data []byte) (*Config, error) {
	root, err := parseJSON(data)
	if err != nil {
		return nil, &SyntaxError{Msg: err.Error()}
	}
	return fromValue(root)
}

func fromValue(root *value) (*Config, error) {
	cfg := Default()
	c := &checker{}
	if c.object(nil, root, c.topFields(cfg, root)) {
		if len(c.issues) == 0 {
			c.unimplemented(cfg, root)
		}
	}
	if len(c.issues) > 0 {
		return nil, &InvalidError{Issues: c.issues}
	}
	cfg.Ignored = c.ignored
	return cfg, nil
}
