package initstage

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/seccomp"
	"github.com/srt-sandbox/srt/internal/usernotif"
)

// The filesystem observer (--report-filesystem-violations): diagnostic
// only. It decides nothing — every notified call is let through exactly as
// if no filter had seen it, and the mounts and Landlock refuse what they
// refuse — and it reads the command's memory, which the command controls:
// a path is read with a bound (PATH_MAX), may be changed by another thread
// of the command while it is read, may be no UTF-8, and is only ever a
// claim, reported sanitised by srt.
//
// Its handlers run on the init stage's one supervisor (supervise_linux.go,
// usernotif), beside the Unix socket gate's. For each notified call the
// handler reads the path arguments, makes each absolute (the thread's
// working directory, or the directory descriptor's path, from the
// sandbox's /proc), checks that the notification is still pending (the pid
// was not reused meanwhile), queues the paths the rules refuse
// (FSRules.Refused, on the path as given), and answers CONTINUE. The
// reporter, off the command's path, resolves the symlinks of the directory
// above each (what the kernel would have followed), checks the rules again
// on that, and sends "deny <syscall> <path>" to srt.

// maxPath is PATH_MAX: the kernel refuses a longer path (ENAMETOOLONG).
const maxPath = 4096

// observer is the filesystem observer's state, shared by its handlers.
type observer struct {
	rules *FSRules
	rep   *reporter
}

// observed is the running observer's reporter (nil when none), whose
// finish sends what is queued before MsgExited.
var observed *reporter

// registerObserver reads the rules from spec.ObserveFD and registers a
// handler per observed call on the init stage's supervisor, which
// startSupervisor then installs and serves.
func registerObserver(arch seccomp.Arch, spec Spec) error {
	rules, err := readRules(spec.ObserveFD)
	if err != nil {
		return err
	}
	o := &observer{rules: rules}
	calls := seccomp.ObservedCalls(arch)
	for _, n := range seccomp.ObserverNotify(spec.ObserveReads && rules.Hides()) {
		for nr, c := range calls {
			if c.Name == n.Syscall {
				if err := supervisor.RegisterInline(n, int(nr), o.pathHandler(c)); err != nil {
					return err
				}
			}
		}
	}
	o.rep = newReporter(o.resolve)
	observed = o.rep
	return nil
}

func readRules(fd int) (*FSRules, error) {
	f := os.NewFile(uintptr(fd), "filesystem rules")
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxRulesSize+1))
	if err != nil {
		return nil, fmt.Errorf("filesystem violations: the rules: %w", err)
	}
	r, err := DecodeFSRules(data)
	if err != nil {
		return nil, fmt.Errorf("filesystem violations: %w", err)
	}
	return r, nil
}

// pathHandler handles a call that names paths (seccomp.ObservedCall): one
// handler per syscall, made from the call's entry in the table. It always
// lets the call run (usernotif.Continue): it decides nothing.
func (o *observer) pathHandler(c seccomp.ObservedCall) usernotif.Handler {
	return func(r *usernotif.Request) usernotif.Reply {
		write := c.FlagsArg < 0 || uint32(r.Args[c.FlagsArg])&seccomp.OpenWriteFlags != 0
		for _, pa := range c.Paths {
			// ReadString checks the notification is still pending once
			// read: what it read was this target's.
			if p, ok := o.absolute(r, pa); ok && o.rules.Refused(p, write) {
				o.rep.report(pending{call: c.Name, path: p, write: write})
			}
		}
		return usernotif.Continue()
	}
}

// absolute reads path argument pa of r and makes it absolute and clean.
func (o *observer) absolute(r *usernotif.Request, pa seccomp.PathArg) (string, bool) {
	raw, err := r.ReadString(r.Args[pa.Path], maxPath)
	if err != nil || len(raw) == 0 {
		return "", false // unreadable, too long, NULL (utimensat on a descriptor) or empty (AT_EMPTY_PATH)
	}
	if raw[0] == '/' {
		return filepath.Clean(string(raw)), true
	}
	link := "/proc/" + strconv.Itoa(r.Pid) + "/cwd"
	if pa.DirFD >= 0 {
		if fd := int32(r.Args[pa.DirFD]); fd != unix.AT_FDCWD {
			if fd < 0 {
				return "", false
			}
			link = "/proc/" + strconv.Itoa(r.Pid) + "/fd/" + strconv.Itoa(int(fd))
		}
	}
	base, err := os.Readlink(link)
	if err != nil || !strings.HasPrefix(base, "/") || !r.Valid() {
		return "", false // gone, or not a directory ("pipe:[…]"; "/x (deleted)" is kept as it reads)
	}
	return filepath.Join(base, string(raw)), true
}

// resolve is the reporter's second look at a refused path: the symlinks of
// the directory above it resolved as the kernel would have followed them
// (of the deepest part that exists), the rules asked again. The line, or
// "" when the resolved path is not refused.
func (o *observer) resolve(p pending) string {
	path := resolveParent(p.path)
	if !o.rules.Refused(path, p.write) {
		return ""
	}
	return "deny " + p.call + " " + path
}

// resolveParent resolves the symlinks of the deepest existing directory
// above p, and keeps the rest of p as it is. At most 64 levels are tried.
func resolveParent(p string) string {
	dir, rest := filepath.Dir(p), filepath.Base(p)
	for i := 0; i < 64 && dir != "/"; i++ {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		dir, rest = filepath.Dir(dir), filepath.Join(filepath.Base(dir), rest)
	}
	return p
}

// finishObserver sends what the observer still holds.
func finishObserver() {
	if observed != nil {
		observed.finish(2 * time.Second)
	}
}
