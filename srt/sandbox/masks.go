//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/decider/control"
	"github.com/srt-sandbox/decider/policy"
	"github.com/srt-sandbox/decider/protocol"
	"github.com/srt-sandbox/srt/internal/credmask"
	"github.com/srt-sandbox/srt/settings"
)

// commandMasks is what a command's credentials in mode "mask" make
// (docs/credentials.md).
type commandMasks struct {
	// env is the command's environment with the sentinels in place of
	// the masked values, and without the variables removed.
	env []string
	// files are the masked copies by real path (symlinks resolved).
	files map[string][]byte
	order []string
	// deny are the files hidden instead (onExtractNoMatch "deny").
	deny []string
	// masks go to the decider.
	masks []control.Mask
}

// maxMaskedFile bounds the size of a file srt reads to mask.
const maxMaskedFile = 1 << 20

// commandMasks makes the masks of cfg's credentials for one command run
// (runID names its masks), from env and the files. A warning says an
// entry is left unprotected, as the reference does; an entry that must
// not run unprotected (onExtractNoMatch "error", a value too long to
// inject) is an error.
func (m *Manager) commandMasks(cfg *settings.Config, env []string, home, dir, runID string) (*commandMasks, error) {
	cr := &cfg.Credentials
	cm := &commandMasks{env: env, files: map[string][]byte{}}
	roles := awsRoles(cr)
	defaultHosts := injectHostsOf(cfg.Network.AllowedDomains)
	add := func(secrets []credmask.Secret, hosts []policy.Pattern, aws *[2]string) error {
		list := defaultHosts
		if hosts != nil {
			list = nil
			for _, h := range hosts {
				list = append(list, h.String())
			}
		}
		if len(list) == 0 {
			// Masked, never injected: nothing may receive the value, so
			// it stays with srt (the decider would refuse a mask no host
			// may receive). Said once per entry.
			for _, s := range secrets {
				m.warnOnce(fmt.Sprintf("credentials entry %q: no host may receive it (injectHosts defaults to the hosts of network.allowedDomains, and there are none): the command gets the sentinel and nothing puts the real value back; add the host to network.allowedDomains, or name it in injectHosts", s.Entry))
				break
			}
			return nil
		}
		for _, s := range secrets {
			if len(s.Value) > credmask.MaxValue {
				return fmt.Errorf("credentials entry %q: a value to mask is %d bytes, more than the %d srt can inject; mask a part of it with extract", s.Entry, len(s.Value), credmask.MaxValue)
			}
			mk := control.Mask{ID: fmt.Sprintf("%s.%d", runID, len(cm.masks)), Sentinel: s.Sentinel, Value: s.Value, InjectHosts: list}
			if aws != nil {
				mk.AWSPair, mk.AWSRole = aws[0], aws[1]
			}
			cm.masks = append(cm.masks, mk)
		}
		return nil
	}
	for _, e := range cr.EnvVars {
		if e.Mode == "deny" {
			cm.env = withoutVar(cm.env, e.Name)
			continue
		}
		value, ok := lookupVar(cm.env, e.Name)
		if !ok || value == "" {
			continue // nothing to protect
		}
		out, err := credmask.Env(e, value)
		if err != nil {
			return nil, err
		}
		if out.Warning != "" {
			fmt.Fprintln(m.opts.Warnings, out.Warning)
		}
		cm.env = withoutVar(cm.env, e.Name)
		if out.Unset {
			continue
		}
		cm.env = append(cm.env, e.Name+"="+out.Text)
		var aws *[2]string
		if r, ok := roles[e.Name]; ok {
			aws = &r
		}
		if err := add(out.Secrets, e.InjectHosts, aws); err != nil {
			return nil, err
		}
	}
	for _, f := range cr.Files {
		if f.Mode != "mask" {
			continue
		}
		real, data, why := readMaskedFile(expandPath(f.Path, home, dir))
		if why != "" {
			fmt.Fprintf(m.opts.Warnings, "srt: warning: credentials.files entry %q is not masked: %s, so it is readable as it is inside the sandbox\n", f.Path, why)
			continue
		}
		out, err := credmask.File(f, string(data))
		if err != nil {
			return nil, err
		}
		if out.Warning != "" {
			fmt.Fprintln(m.opts.Warnings, out.Warning)
		}
		if out.Unset {
			cm.deny = append(cm.deny, real)
			continue
		}
		if err := add(out.Secrets, f.InjectHosts, nil); err != nil {
			return nil, err
		}
		if _, dup := cm.files[real]; !dup {
			cm.order = append(cm.order, real)
		}
		cm.files[real] = []byte(out.Text)
	}
	return cm, nil
}

// config is cfg with the files cm hides added as credentials.files deny
// entries (cfg itself when there are none).
func (cm *commandMasks) config(cfg *settings.Config) *settings.Config {
	if len(cm.deny) == 0 {
		return cfg
	}
	over := *cfg
	over.Credentials.Files = append([]settings.CredentialFile(nil), cfg.Credentials.Files...)
	for _, p := range cm.deny {
		over.Credentials.Files = append(over.Credentials.Files, settings.CredentialFile{Path: p, Mode: "deny"})
	}
	return &over
}

// readMaskedFile reads a file to mask: a regular file of UTF-8 text, its
// symlinks resolved. why says why it is not one.
func readMaskedFile(p string) (real string, data []byte, why string) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", nil, "it does not exist"
		}
		return "", nil, err.Error()
	}
	// Read as the sandbox could, not with srt's own privileges: as root
	// without the capabilities that pass over file modes (the sandbox's
	// root has none), so a file only those would open — another user's,
	// reached through a symlink a command planted — is never read,
	// masked and injected (the hostile review of issue 12).
	f, err := openAsSandbox(real)
	if err != nil {
		return "", nil, err.Error()
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return "", nil, err.Error()
	case !fi.Mode().IsRegular():
		return "", nil, "it is not a regular file"
	case fi.Size() > maxMaskedFile:
		return "", nil, fmt.Sprintf("it is larger than %d bytes", maxMaskedFile)
	}
	data, err = io.ReadAll(io.LimitReader(f, maxMaskedFile+1))
	switch {
	case err != nil:
		return "", nil, err.Error()
	case len(data) > maxMaskedFile:
		return "", nil, fmt.Sprintf("it is larger than %d bytes", maxMaskedFile)
	case len(data) == 0:
		return "", nil, "it is empty"
	case !credmask.Text(data):
		return "", nil, "it is not UTF-8 text"
	}
	return real, data, ""
}

// openAsSandbox opens a regular file for reading with the access the
// sandbox's processes have: srt's own for a user; for root, uid 0 without
// CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_FOWNER, dropped from the
// effective set of one locked thread for the open and raised again
// before the thread is unlocked. (The thread must not end instead: a
// child srt started from it earlier, such as the network namespace
// helper, has SIGKILL as its parent-death signal, which the end of the
// thread that forked it sends.)
func openAsSandbox(path string) (*os.File, error) {
	flags := os.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK
	if os.Geteuid() != 0 {
		return os.OpenFile(path, flags, 0)
	}
	runtime.LockOSThread()
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var saved [2]unix.CapUserData
	if err := unix.Capget(&hdr, &saved[0]); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("capget: %w", err)
	}
	dropped := saved
	for _, c := range []uint{unix.CAP_DAC_OVERRIDE, unix.CAP_DAC_READ_SEARCH, unix.CAP_FOWNER} {
		dropped[c/32].Effective &^= 1 << (c % 32)
	}
	if err := unix.Capset(&hdr, &dropped[0]); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("capset: %w", err)
	}
	f, err := os.OpenFile(path, flags, 0)
	if rerr := unix.Capset(&hdr, &saved[0]); rerr != nil {
		// The thread keeps fewer capabilities than the process: leave it
		// locked, so nothing else runs on it; it ends with the process.
		if f != nil {
			f.Close()
		}
		return nil, fmt.Errorf("capset: %w", rerr)
	}
	runtime.UnlockOSThread()
	return f, err
}

// expandPath makes a settings path absolute: "~" from home, a relative
// path from dir.
func expandPath(p, home, dir string) string {
	if p == "~" {
		p = home
	} else if strings.HasPrefix(p, "~/") {
		p = home + p[1:]
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p)
}

// injectHostsOf are the hosts of allowedDomains, ports dropped: where a
// mask without injectHosts may be injected.
func injectHostsOf(allowed []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, a := range allowed {
		p, err := policy.ParseAllowPattern(a)
		if err != nil {
			continue
		}
		h := p.Host()
		switch {
		case p.IsWildcard():
			h = "*." + h
		case p.IsIP() && p.IP().Is6():
			h = "[" + h + "]"
		}
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	return out
}

// awsRoles places the variables of credentials.awsPairs, and the standard
// AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (/ AWS_SESSION_TOKEN) when
// both are masked whole and in no pair, in their pair: variable → {pair,
// role}.
func awsRoles(cr *settings.Credentials) map[string][2]string {
	roles := map[string][2]string{}
	for i, p := range cr.AWSPairs {
		pair := fmt.Sprintf("aws%d", i)
		roles[p.AccessKeyIDVar] = [2]string{pair, protocol.AWSAccessKeyID}
		roles[p.SecretAccessKeyVar] = [2]string{pair, protocol.AWSSecretAccessKey}
		if p.SessionTokenVar != "" {
			roles[p.SessionTokenVar] = [2]string{pair, protocol.AWSSessionToken}
		}
	}
	whole := map[string]bool{}
	for _, e := range cr.EnvVars {
		if e.Mode == "mask" && e.Extract == "" && e.Decode == "" && len(e.MaskClaims) == 0 {
			whole[e.Name] = true
		}
	}
	const id, secret, token = "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"
	_, idTaken := roles[id]
	_, secretTaken := roles[secret]
	if whole[id] && whole[secret] && !idTaken && !secretTaken {
		roles[id] = [2]string{"aws", protocol.AWSAccessKeyID}
		roles[secret] = [2]string{"aws", protocol.AWSSecretAccessKey}
		if _, taken := roles[token]; whole[token] && !taken {
			roles[token] = [2]string{"aws", protocol.AWSSessionToken}
		}
	}
	return roles
}

func lookupVar(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v, true
		}
	}
	return "", false
}

func withoutVar(env []string, name string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// sendMasks gives the decider a command's masks, and counts the run so
// that releaseMasks drops them once no run of the key has any.
func (m *Manager) sendMasks(key string, masks []control.Mask) error {
	eg, err := m.egress()
	if err != nil {
		return err
	}
	if err := eg.Masks(key, masks); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	m.net.mu.Lock()
	if m.net.maskRuns == nil {
		m.net.maskRuns = map[string]int{}
	}
	m.net.maskRuns[key]++
	m.net.mu.Unlock()
	return nil
}

// releaseMasks is a run's end: once no run of key has masks, the decider
// forgets them (an unregister, after which srt-proxy drops them) unless
// the key has its own list (RegisterCommandNetwork), whose removal drops
// them later.
func (m *Manager) releaseMasks(key string) {
	m.net.mu.Lock()
	m.net.maskRuns[key]--
	last := m.net.maskRuns[key] == 0
	if last {
		delete(m.net.maskRuns, key)
	}
	_, listed := m.net.lists[key]
	eg := m.net.eg
	m.net.mu.Unlock()
	if last && !listed && eg != nil {
		eg.Unregister(key)
	}
}
