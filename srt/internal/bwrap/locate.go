//go:build linux

package bwrap

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/srt-sandbox/srt/internal/hostexec"
)

// MinVersion is the oldest bubblewrap srt runs with.
var MinVersion = Version{0, 5, 0}

// Version is a bubblewrap version.
type Version [3]int

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) }

// Less compares versions.
func (v Version) Less(o Version) bool {
	for i := range v {
		if v[i] != o[i] {
			return v[i] < o[i]
		}
	}
	return false
}

// Info describes an installed bubblewrap.
type Info struct {
	Path    string
	Version Version
	Setuid  bool
}

const installHint = "install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap)"

// Find finds bubblewrap without running it: configured (bwrapPath; no
// PATH fallback) or "bwrap" on PATH. Whether srt may run what it found is
// for the caller to check (srt/internal/hostexec) before CheckVersion
// runs it.
func Find(configured string) (Info, error) {
	p := configured
	if p == "" {
		found, err := exec.LookPath("bwrap")
		if err != nil {
			return Info{}, hostexec.Missingf("bubblewrap (bwrap) is not installed or not on PATH; %s", installHint)
		}
		if p, err = filepath.Abs(found); err != nil {
			return Info{}, err
		}
	}
	fi, err := os.Stat(p)
	if err != nil {
		return Info{}, hostexec.Missingf("bubblewrap (bwrapPath %s) cannot be used: %v; fix bwrapPath or %s", p, err, installHint)
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return Info{}, hostexec.Missingf("bubblewrap (bwrap) is not executable at %s", p)
	}
	return Info{Path: p, Setuid: fi.Mode()&os.ModeSetuid != 0}, nil
}

// CheckVersion runs `bwrap --version` (or reads the answer cached for this
// very binary) and refuses a bubblewrap older than MinVersion.
func CheckVersion(info *Info) error {
	fi, err := os.Stat(info.Path)
	if err != nil {
		return hostexec.Missingf("bubblewrap at %s cannot be used: %v", info.Path, err)
	}
	if info.Version, err = version(info.Path, fi); err != nil {
		return err
	}
	if info.Version.Less(MinVersion) {
		return hostexec.Missingf("bubblewrap %s at %s is older than %s, the oldest srt supports; upgrade it", info.Version, info.Path, MinVersion)
	}
	return nil
}

// cacheKey identifies one bubblewrap binary: a changed binary is checked
// again.
func cacheKey(p string, fi os.FileInfo) string {
	var ino uint64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = st.Ino
	}
	return fmt.Sprintf("%s\t%d\t%d\t%d", p, fi.Size(), fi.ModTime().UnixNano(), ino)
}

// parseVersion reads "bubblewrap X.Y[.Z]" from bwrap --version.
func parseVersion(out string) (Version, bool) {
	_, rest, ok := strings.Cut(out, "bubblewrap ")
	if !ok {
		return Version{}, false
	}
	rest, _, _ = strings.Cut(strings.TrimSpace(rest), "\n")
	parts := strings.SplitN(strings.TrimSpace(rest), ".", 3)
	if len(parts) < 2 {
		return Version{}, false
	}
	var v Version
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return Version{}, false
		}
		v[i] = n
	}
	return v, true
}

// version runs `bwrap --version`, or reads the answer cached for this very
// binary (one line: the key, a tab, the version).
func version(p string, fi os.FileInfo) (Version, error) {
	key := cacheKey(p, fi)
	cacheFile := cachePath()
	if cacheFile != "" {
		if data, err := os.ReadFile(cacheFile); err == nil {
			k, v, ok := strings.Cut(strings.TrimSpace(string(data)), "\tversion=")
			if ver, vok := parseVersion("bubblewrap " + v); ok && vok && k == key {
				return ver, nil
			}
		}
	}
	out, err := exec.Command(p, "--version").CombinedOutput()
	if err != nil {
		return Version{}, hostexec.Missingf("bubblewrap at %s does not run (%v: %s); reinstall it", p, err, strings.TrimSpace(string(out)))
	}
	v, ok := parseVersion(string(out))
	if !ok {
		return Version{}, hostexec.Missingf("bubblewrap at %s printed no version (%q)", p, strings.TrimSpace(string(out)))
	}
	if cacheFile != "" {
		os.MkdirAll(filepath.Dir(cacheFile), 0o700)
		// The cache may be where a sandbox can write (allowWrite "~"): a
		// fresh file only (O_EXCL, never through a planted symlink), renamed
		// over the old one (a rename replaces a symlink, never follows it).
		tmp := cacheFile + ".tmp" + strconv.Itoa(os.Getpid())
		if f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600); err == nil {
			_, werr := f.WriteString(key + "\tversion=" + v.String() + "\n")
			if f.Close() == nil && werr == nil {
				os.Rename(tmp, cacheFile)
			} else {
				os.Remove(tmp)
			}
		}
	}
	return v, nil
}

func cachePath() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "srt", "bwrap-version")
}
