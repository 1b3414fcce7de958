//go:build linux

package main

import (
	"log/slog"
	"strings"
	"testing"
)

func TestDebugLogger(t *testing.T) {
	var b strings.Builder
	log := newDebugLogger(&b)
	log.Debug("sandbox ready", "bwrap", "/usr/bin/bwrap", "init", "/opt/my srt/srt-init")
	log.Debug("plan:\nroot host-ro\n")
	log.With("n", 3).WithGroup("g").Debug("grouped", "k", `a"b`, slog.Group("sub", "x", true), slog.Attr{})
	want := "srt: debug: sandbox ready bwrap=/usr/bin/bwrap init=\"/opt/my srt/srt-init\"\n" +
		"srt: debug: plan:\nroot host-ro\n\n" +
		"srt: debug: grouped n=3 g.k=\"a\\\"b\" g.sub.x=true\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
	if log.Enabled(nil, slog.LevelDebug-1) {
		t.Error("enabled below debug")
	}
}
