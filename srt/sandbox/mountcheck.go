//go:build linux

package sandbox

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/fsview"
	"github.com/srt-sandbox/srt/internal/initstage"
	"github.com/srt-sandbox/srt/internal/plan"
)

// addHostDevices completes the init stage's mount check with what only
// the host can tell: the devices of its filesystems. A writable mount of
// one of them inside the sandbox must be a grant (initstage.checkMounts);
// the sandbox's own tmpfs, proc and devpts mounts have devices of their
// own.
func addHostDevices(p *plan.Plan) error {
	if !p.Init.CheckMounts {
		return nil
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return fmt.Errorf("sandbox: reading the host's mounts: %w", err)
	}
	defer f.Close()
	ms, err := initstage.ParseMountinfo(f)
	if err != nil {
		return fmt.Errorf("sandbox: reading the host's mounts: %w", err)
	}
	seen := map[uint64]bool{}
	for _, m := range ms {
		if p.ProcBind && fsview.IsWithin(m.MountPoint, "/proc") {
			// enableWeakerNestedSandbox binds the host's /proc writable,
			// with whatever is mounted beneath it: not checked.
			continue
		}
		if d := unix.Mkdev(m.Major, m.Minor); !seen[d] {
			seen[d] = true
			p.Init.HostDevs = append(p.Init.HostDevs, d)
		}
	}
	return nil
}
