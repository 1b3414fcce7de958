package settings

import "github.com/srt-sandbox/decider/settingsfile"

type (
	// InvalidError lists every problem in a settings document.
	InvalidError = settingsfile.InvalidError
	// SyntaxError is a document that is not JSON.
	SyntaxError = settingsfile.SyntaxError
)

// Parse validates a settings document. It returns *SyntaxError or
// *InvalidError; an InvalidError lists every problem found, not the first.
func Parse(data []byte) (*Config, error) {
	root, err := settingsfile.Parse(data)
	if err != nil {
		return nil, err
	}
	return fromValue(root)
}

func fromValue(root *value) (*Config, error) {
	cfg := Default()
	c := &checker{}
	c.Hints = sectionKeys()
	if c.Object(nil, root, c.topFields(cfg, root)) {
		if len(c.Issues) == 0 {
			c.unimplemented(root)
		}
	}
	if len(c.Issues) > 0 {
		return nil, &InvalidError{Issues: c.Issues}
	}
	cfg.Ignored = c.Ignored
	return cfg, nil
}
