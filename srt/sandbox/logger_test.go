//go:build linux

package sandbox_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/srt-sandbox/srt/internal/backendtest"
	"github.com/srt-sandbox/srt/sandbox"
)

// TestLoggerIsSlog: the host gives its own *slog.Logger (the standard
// library's) and gets the debug lines as records with attributes; a
// logger that wants no debug records gets none.
func TestLoggerIsSlog(t *testing.T) {
	backendtest.Skip(t)
	var b strings.Builder
	log := slog.New(slog.NewJSONHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug}))
	m := newManager(t, parse(t, plain), sandbox.Options{Logger: log})
	defer m.Close()
	cmd, err := m.Command(context.Background(), "true")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Release()
	for _, want := range []string{`"level":"DEBUG","msg":"sandbox ready","bwrap":"/`, `"msg":"bubblewrap checked"`, `"msg":"plan:\nroot host-ro\n`, `"msg":"layers: `} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the host's logger did not get %s:\n%s", want, b.String())
		}
	}

	b.Reset()
	quiet := slog.New(slog.NewJSONHandler(&b, &slog.HandlerOptions{Level: slog.LevelInfo}))
	m2 := newManager(t, parse(t, plain), sandbox.Options{Logger: quiet})
	defer m2.Close()
	if cmd, err = m2.Command(context.Background(), "true"); err != nil {
		t.Fatal(err)
	}
	cmd.Release()
	if b.Len() != 0 {
		t.Errorf("a logger at Info got: %s", b.String())
	}
}
