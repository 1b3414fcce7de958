package settings

import (
	"fmt"
	"strings"
)

// The sandbox backends (the backend key, srt's extension).
const (
	// BackendAuto is bubblewrap where user namespaces can be made, else
	// Landlock.
	BackendAuto = "auto"
	// BackendBubblewrap is the sandbox of namespaces and mounts.
	BackendBubblewrap = "bubblewrap"
	// BackendLandlock is the sandbox without namespaces: Landlock and
	// seccomp alone (docs/security.md, "The Landlock backend").
	BackendLandlock = "landlock"
)

// Backends are the backend key's values.
var Backends = []string{BackendAuto, BackendBubblewrap, BackendLandlock}

// A Weaker is a part of the Landlock backend that a kernel may lack, which
// allowWeaker (or srt --allow-weaker) lets srt run without.
type Weaker struct {
	Name string
	ABI  int    // the first Landlock ABI that has it
	What string // what the command may do without it
}

// WeakerNames are every allowWeaker name, by the Landlock ABI they need.
var WeakerNames = []Weaker{
	{"truncate", 3, "truncate any file it can open (truncate(2), O_TRUNC)"},
	{"network", 4, "open TCP connections to any address and port, and listen on any port, bypassing srt-proxy"},
	{"device-ioctl", 5, "send ioctls to the devices it opens"},
	{"signals", 6, "signal every process of its user outside the sandbox, and connect to abstract Unix sockets bound outside"},
	// Not a kernel feature: Landlock does not cover chmod(2), and uid 0
	// owns most of the host's files (ABI 0: every kernel lacks it).
	{"root", 0, "change the mode of every file root owns on the host (/etc/shadow's, /proc's) wherever srt's supervisor of chmod cannot run (inside another sandbox whose supervisor is taken; srt warns): it runs as uid 0, without capabilities, and Landlock does not cover chmod"},
}

func weakerNames() string {
	var n []string
	for _, w := range WeakerNames {
		n = append(n, fmt.Sprintf("%q", w.Name))
	}
	return strings.Join(n, ", ")
}

func (c *checker) backend(p path, v *value, cfg *Config) {
	s, ok := c.Str(p, v)
	if !ok {
		return
	}
	for _, b := range Backends {
		if s == b {
			cfg.Backend = s
			return
		}
	}
	c.Add(p, "%q is not a backend: use \"auto\" (the default: bubblewrap where user namespaces can be made, else Landlock), \"bubblewrap\" or \"landlock\"", s)
}

// CheckWeaker refuses a name that is not an allowWeaker name.
func CheckWeaker(name string) error {
	for _, w := range WeakerNames {
		if name == w.Name {
			return nil
		}
	}
	return fmt.Errorf("%q is not a part of the Landlock backend srt can go without: use one of %s", name, weakerNames())
}

func (c *checker) allowWeaker(p path, v *value, cfg *Config) {
	names, ok := c.Strings(p, v, false)
	if !ok {
		return
	}
	seen := map[string]bool{}
	out := []string{}
	for i, n := range names {
		switch err := CheckWeaker(n); {
		case err != nil:
			c.Add(p.Idx(i), "%v", err)
		case seen[n]:
			c.Add(p.Idx(i), "%q is listed twice", n)
		default:
			seen[n] = true
			out = append(out, n)
		}
	}
	cfg.AllowWeaker = out
}
