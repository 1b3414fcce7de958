//go:build linux

package bwrap

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// The version cache is written through a fresh file only: a symlink
// planted where srt writes it (a sandbox may write the cache directory) is
// not followed.
func TestVersionCacheFollowsNoSymlink(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	fake := filepath.Join(t.TempDir(), "bwrap")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho bubblewrap 0.8.0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	os.MkdirAll(filepath.Join(cache, "srt"), 0o700)
	os.Symlink(victim, filepath.Join(cache, "srt", "bwrap-version.tmp"+strconv.Itoa(os.Getpid())))
	info := Info{Path: fake}
	if err := CheckVersion(&info); err != nil || info.Version != (Version{0, 8, 0}) {
		t.Fatalf("CheckVersion: %v %v", info.Version, err)
	}
	if data, _ := os.ReadFile(victim); string(data) != "keep" {
		t.Fatalf("the cache write followed a planted symlink: %q", data)
	}
	// Control: without the plant the answer is cached.
	os.Remove(filepath.Join(cache, "srt", "bwrap-version.tmp"+strconv.Itoa(os.Getpid())))
	if err := CheckVersion(&info); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(cache, "srt", "bwrap-version")); err != nil || len(data) == 0 {
		t.Fatalf("control: no cache written: %v", err)
	}
}
