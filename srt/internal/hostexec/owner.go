package hostexec

import (
	"os"
	"strconv"
	"strings"
	"sync"
)

// unmappedOwner is the uid a file shows when its owner is not mapped into
// this process's user namespace (kernel.overflowuid), or -1 in the initial
// user namespace, where every owner is mapped. Inside a user namespace (a
// srt nested in a sandbox) root's files show as it, and no process in the
// namespace can act as it: it counts as root.
var unmappedOwner = sync.OnceValue(func() int {
	data, err := os.ReadFile("/proc/self/uid_map")
	if err != nil || strings.Join(strings.Fields(string(data)), " ") == "0 0 4294967295" {
		return -1
	}
	data, err = os.ReadFile("/proc/sys/kernel/overflowuid")
	if err != nil {
		return 65534
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 65534
	}
	return n
})

// trustedOwner: root, the caller, or (in a user namespace) an owner not
// mapped into it.
func trustedOwner(owner uint32, uid int) bool {
	return owner == 0 || int(owner) == uid || int(owner) == unmappedOwner()
}
