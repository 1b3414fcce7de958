package settings

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const validDoc = `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":["~/.ssh"],"allowWrite":["."],"denyWrite":[]}}`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLoadFileErrors checks the reference's file-level messages (§1.2):
// the first line of each error, and the refusal line that follows it.
func TestLoadFileErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name     string
		path     func(t *testing.T) string
		explicit bool
		msg      string // Error(), with the path written as <file>
		refusal  string
	}{
		{"explicit file missing", func(t *testing.T) string { return filepath.Join(dir, "nope.json") }, true,
			"<file> does not exist.", RefuseMissing},
		{"empty", func(t *testing.T) string { return writeFile(t, "e.json", "") }, false,
			"<file> is empty. Delete it, or put a config in it.", RefuseBroken},
		{"whitespace only", func(t *testing.T) string { return writeFile(t, "w.json", " \n\t\r\n ") }, true,
			"<file> is empty. Delete it, or put a config in it.", RefuseBroken},
		{"directory", func(t *testing.T) string { return dir }, true,
			"<file> could not be read (EISDIR).", RefuseBroken},
		{"directory at the default path", func(t *testing.T) string { return dir }, false,
			"<file> could not be read (EISDIR).", RefuseBroken},
		{"path through a file", func(t *testing.T) string { return filepath.Join(writeFile(t, "f", "x"), "s.json") }, true,
			"<file> could not be read (ENOTDIR).", RefuseBroken},
		{"not JSON", func(t *testing.T) string { return writeFile(t, "n.json", "{network: 1}") }, true,
			"<file> is not valid JSON: invalid character 'n' at offset 1", RefuseBroken},
		{"duplicate key", func(t *testing.T) string { return writeFile(t, "d.json", `{"a": 1, "a": 2}`) }, true,
			`<file> is not valid JSON: duplicate key "a" at offset 7`, RefuseBroken},
		{"invalid config", func(t *testing.T) string { return writeFile(t, "i.json", `{"network":{}}`) }, true,
			"<file> does not hold a valid config — network.allowedDomains: Required; network.deniedDomains: Required; filesystem: Required", RefuseBroken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.path(t)
			cfg, found, err := Load(p, tt.explicit)
			if cfg != nil || found {
				t.Errorf("Load returned a config (%v, found=%v) with the error", cfg != nil, found)
			}
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("Load error = %v (%T), want a *FileError", err, err)
			}
			if got := strings.Replace(err.Error(), p, "<file>", 1); got != tt.msg {
				t.Errorf("Error()\n got: %s\nwant: %s", got, tt.msg)
			}
			if fe.Path != p {
				t.Errorf("Path = %q, want %q", fe.Path, p)
			}
			if fe.Refusal != tt.refusal {
				t.Errorf("Refusal = %q, want %q", fe.Refusal, tt.refusal)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Error("the error does not match ErrInvalid")
			}
		})
	}
}

// TestLoadUnreadable checks a file srt may not read. Root reads a mode-000
// file anyway, so there the test skips; TestLoadFileErrors covers the same
// branch with a directory (EISDIR) for every user.
func TestLoadUnreadable(t *testing.T) {
	p := writeFile(t, "secret.json", validDoc)
	if err := os.Chmod(p, 0); err != nil {
		t.Fatal(err)
	}
	if f, err := os.Open(p); err == nil {
		f.Close()
		t.Skip("this user reads a mode-000 file (root, or CAP_DAC_OVERRIDE): EACCES cannot happen here")
	}
	for _, explicit := range []bool{true, false} {
		_, _, err := Load(p, explicit)
		if want := p + " could not be read (EACCES)."; err == nil || err.Error() != want {
			t.Errorf("explicit=%v: Load error = %v, want %q", explicit, err, want)
		}
	}
}

func TestLoadDefaultPathMissing(t *testing.T) {
	home := t.TempDir()
	p := DefaultPath(home)
	if p != filepath.Join(home, ".srt-settings.json") {
		t.Errorf("DefaultPath = %q", p)
	}
	cfg, found, err := Load(p, false)
	if err != nil || found {
		t.Fatalf("Load(missing default) = (found=%v, %v), want the defaults", found, err)
	}
	if !reflect.DeepEqual(cfg, Default()) {
		t.Errorf("missing default file gave %+v, want Default()", cfg)
	}
	if cfg.MandatoryDenySearchDepth != DefaultMandatoryDenySearchDepth || len(cfg.Network.AllowedDomains) != 0 ||
		len(cfg.Filesystem.AllowWrite) != 0 || cfg.Network.Lists == nil {
		t.Errorf("Default() is not the documented default: %+v", cfg)
	}
}

func TestLoadValid(t *testing.T) {
	p := writeFile(t, "ok.json", validDoc)
	for _, explicit := range []bool{true, false} {
		cfg, found, err := Load(p, explicit)
		if err != nil || !found || cfg == nil {
			t.Fatalf("explicit=%v: Load = (%v, %v, %v)", explicit, cfg != nil, found, err)
		}
		if want := []PathEntry{{Path: "~/.ssh"}}; !reflect.DeepEqual(cfg.Filesystem.DenyRead, want) {
			t.Errorf("DenyRead = %v, want %v", cfg.Filesystem.DenyRead, want)
		}
	}
}

// TestLoadErrorsUnwrap checks that callers can tell the kinds apart by type.
func TestLoadErrorsUnwrap(t *testing.T) {
	_, _, err := Load(writeFile(t, "i.json", `[]`), true)
	var inv *InvalidError
	if !errors.As(err, &inv) || len(inv.Issues) != 1 || inv.Issues[0] != (Issue{Path: "(root)", Message: "Expected object, received array"}) {
		t.Errorf("Load([]) = %v, want an *InvalidError with the root issue", err)
	}
	_, _, err = Load(writeFile(t, "s.json", `{`), true)
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Errorf("Load({) = %v, want a *SyntaxError", err)
	}
}

// TestParseIgnored checks that keys with no effect on Linux are reported
// as ignored, with the reason, in file order.
func TestParseIgnored(t *testing.T) {
	cfg, err := Parse([]byte(`{"allowPty": true, "network": {"allowedDomains": [], "deniedDomains": [], "allowMachLookup": ["com.x"]},
		"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}, "windows": {}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"allowPty (macOS only)",
		"network.allowMachLookup (macOS only)",
		"windows (Windows only)",
	}
	if !reflect.DeepEqual(cfg.Ignored, want) {
		t.Errorf("Ignored = %q, want %q", cfg.Ignored, want)
	}
}
