package plan

import (
	"path/filepath"
	"strings"

	"github.com/srt-sandbox/srt/internal/fsview"
)

// stateWhy names the protection of srt's state directory in the plan.
const stateWhy = "srt state directory"

// ownState keeps srt's own state directory (Input.StateDir) read-only in
// every sandbox, whatever the settings say (filesystem.disabled included,
// as for tlsTerminate's key): srt takes its lock and reads its journals
// there, and a command that could write it could plant a lock symlink that
// srt follows, or a journal naming files for the next srt to delete.
// Nothing in it is for the sandbox (the trust bundle is bound on its own,
// at TrustBundlePath). The writable directories above it are pinned, so
// that it cannot be renamed away and made again by the command.
func (b *builder) ownState() {
	if b.in.StateDir == "" {
		return
	}
	real, fi, err := fsview.Stat(b.in.FS, b.in.StateDir)
	if err != nil || !fi.IsDir() {
		b.note("%s %s does not exist", stateWhy, b.in.StateDir) // srt makes it before it plans
		return
	}
	n := b.t.get(real, true)
	b.mark(n, stateWhy, func(n *node) { n.writeDeny = true })
	b.pinAbove(filepath.Dir(real))
}

// rootWhy names what makes "/" writable, for Writable.
func (b *builder) rootWhy() string {
	if b.in.Config.Filesystem.Disabled {
		return "filesystem.disabled"
	}
	return strings.Join(b.t.root.why, ", ")
}

// settingsWhy names the protection of srt's settings files in the plan.
const settingsWhy = "srt settings file"

// settingsFiles are the protections of Input.SettingsFiles: an existing
// file gets a read-only mount (and its writable directories are pinned),
// a missing one a placeholder where the command could otherwise create it.
func (b *builder) settingsFiles() []protect {
	var out []protect
	for _, f := range b.in.SettingsFiles {
		out = append(out, protect{abs: filepath.Clean(f), why: settingsWhy})
	}
	return out
}
