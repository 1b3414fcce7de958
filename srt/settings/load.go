package settings

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/srt-sandbox/decider/settingsfile"
)

// FileName is the default settings file, in the home directory.
const FileName = ".srt-settings.json"

// DefaultPath is ~/.srt-settings.json for the given home directory.
func DefaultPath(home string) string { return filepath.Join(home, FileName) }

// Refusal lines printed after a file error: srt never falls back to the
// built-in defaults when a file was meant to apply.
const (
	RefuseMissing = "Refusing to run with the built-in defaults, which would drop the rules --settings asked for."
	RefuseBroken  = "Refusing to run with the built-in defaults, which would drop this file's rules (its denyRead, allowRead and credential entries included)."
)

// ErrInvalid is matched (errors.Is) by every error that means a settings
// file cannot be used.
var ErrInvalid = settingsfile.ErrInvalid

// FileError is a settings file that cannot be used. Its Error is the
// reference's first line; Refusal is the line that follows it.
type FileError struct {
	Path    string
	Refusal string
	Err     error
}

func (e *FileError) Error() string {
	switch err := e.Err.(type) {
	case *InvalidError, *SyntaxError:
		return e.Path + " " + err.Error()
	}
	return e.Path + " " + e.Err.Error()
}

func (e *FileError) Unwrap() []error { return []error{e.Err, ErrInvalid} }

// Load reads and validates the settings file at p. When explicit is false
// (the default path) an absent file yields Default(); when true (--settings)
// an absent file is an error.
func Load(p string, explicit bool) (*Config, bool, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !explicit {
			return Default(), false, nil
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, &FileError{Path: p, Refusal: RefuseMissing, Err: errors.New("does not exist.")}
		}
		return nil, false, &FileError{Path: p, Refusal: RefuseBroken, Err: fmt.Errorf("could not be read (%s).", settingsfile.ErrnoName(err))}
	}
	if strings.TrimSpace(string(data)) == "" {
		return nil, false, &FileError{Path: p, Refusal: RefuseBroken, Err: errors.New("is empty. Delete it, or put a config in it.")}
	}
	cfg, err := Parse(data)
	if err != nil {
		return nil, false, &FileError{Path: p, Refusal: RefuseBroken, Err: err}
	}
	return cfg, true, nil
}
