//go:build linux

package placeholders

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The sharing protocol between runs of different state directories
// (TMPDIRs), which see none of each other's journals: the locks on the
// placeholder itself carry it (lock.go).

// openIn opens a registry whose state directory is in tmp.
func openIn(t *testing.T, tmp string) *Registry {
	t.Helper()
	t.Setenv("TMPDIR", tmp)
	r, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func acquire(t *testing.T, r *Registry, wants ...Want) *Claim {
	t.Helper()
	c, err := r.Acquire(wants)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func journalsOf(r *Registry) []*journal { return readJournals(r.dir) }

// B adopts what A made; whichever ends first leaves it to the other, and
// the last holder removes it.
func TestSharedAcrossStateDirs(t *testing.T) {
	for _, aFirst := range []bool{true, false} {
		home := t.TempDir()
		rc := Want{Path: filepath.Join(home, ".bashrc")}
		dir := Want{Path: filepath.Join(home, ".ssh"), Dir: true}
		conf := Want{Path: filepath.Join(home, ".ssh", "config")}
		commondir := Want{Path: filepath.Join(home, "commondir"), Content: "."}
		wants := []Want{rc, dir, conf, commondir}
		ra, rb := openIn(t, t.TempDir()), openIn(t, t.TempDir())
		ca := acquire(t, ra, wants...)
		cb := acquire(t, rb, wants...)
		for _, e := range cb.j.Entries {
			if !e.Shared {
				t.Fatalf("B did not adopt %s: %+v", e.Path, cb.j.Entries)
			}
		}
		if len(cb.j.Entries) != len(wants) {
			t.Fatalf("B's journal names %d of %d placeholders: %+v", len(cb.j.Entries), len(wants), cb.j.Entries)
		}
		first, second, rFirst := ca, cb, ra
		if !aFirst {
			first, second, rFirst = cb, ca, rb
		}
		if err := first.Release(); err != nil {
			t.Fatal(err)
		}
		for _, w := range wants {
			if _, err := os.Lstat(w.Path); err != nil {
				t.Fatalf("aFirst=%v: %s was removed while the other run holds it: %v", aFirst, w.Path, err)
			}
		}
		// The first left them in a released journal, in case the other
		// dies: a sweep removes nothing the other holds.
		js := journalsOf(rFirst)
		if len(js) != 1 || !js[0].Released || len(js[0].Entries) != len(wants) {
			t.Fatalf("aFirst=%v: want one released journal naming the %d placeholders, got %+v", aFirst, len(wants), js)
		}
		rFirst.sweep()
		if _, err := os.Lstat(rc.Path); err != nil {
			t.Fatalf("aFirst=%v: a sweep removed a placeholder another run holds: %v", aFirst, err)
		}
		if err := second.Release(); err != nil {
			t.Fatal(err)
		}
		for _, w := range wants {
			if _, err := os.Lstat(w.Path); !os.IsNotExist(err) {
				t.Errorf("aFirst=%v: the last holder left %s: %v", aFirst, w.Path, err)
			}
		}
		rFirst.sweep()
		if js := journalsOf(rFirst); len(js) != 0 {
			t.Errorf("aFirst=%v: the released journal outlived its placeholders: %+v", aFirst, js)
		}
	}
}

// A file of the user's at a placeholder path is held by every run that
// mounts on it, adopted by none, and removed by none: the use lock of one
// run does not make it a placeholder for another (the marker does).
func TestUserFileNotAdopted(t *testing.T) {
	home := t.TempDir()
	rc := filepath.Join(home, ".bashrc")
	os.WriteFile(rc, nil, 0o644)
	ra, rb := openIn(t, t.TempDir()), openIn(t, t.TempDir())
	ca := acquire(t, ra, Want{Path: rc})
	cb := acquire(t, rb, Want{Path: rc})
	if len(ca.j.Entries)+len(cb.j.Entries) != 0 {
		t.Fatalf("the user's file was taken for a placeholder: %+v %+v", ca.j.Entries, cb.j.Entries)
	}
	if _, _, ok := cb.Identity(rc); !ok {
		t.Fatal("B holds nothing at the user's file")
	}
	if Held(rc) {
		t.Error("Held takes the user's empty file for a placeholder")
	}
	ca.Release()
	cb.Release()
	if _, err := os.Stat(rc); err != nil {
		t.Fatalf("the user's file was removed: %v", err)
	}
	// Control: the same path as A's placeholder is adopted.
	os.Remove(rc)
	ca = acquire(t, ra, Want{Path: rc})
	cb = acquire(t, rb, Want{Path: rc})
	if len(cb.j.Entries) != 1 || !cb.j.Entries[0].Shared {
		t.Fatalf("control: A's placeholder was not adopted: %+v", cb.j.Entries)
	}
	if !Held(rc) {
		t.Error("control: Held does not see A's placeholder")
	}
	ca.Release()
	cb.Release()
}

// A run holds its descriptors with close-on-exec, so that they never
// reach bubblewrap or the sandbox.
func TestHeldDescriptorsCloseOnExec(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "user"), nil, 0o644)
	c := acquire(t, openIn(t, t.TempDir()), Want{Path: filepath.Join(home, "made")}, Want{Path: filepath.Join(home, "dir"), Dir: true}, Want{Path: filepath.Join(home, "user")})
	defer c.Release()
	if len(c.held) != 3 {
		t.Fatalf("want 3 held, got %+v", c.held)
	}
	for _, h := range c.held {
		flags, err := unix.FcntlInt(uintptr(h.fd), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC == 0 {
			t.Errorf("%s: descriptor %d flags %#x %v: not close-on-exec", h.e.Path, h.fd, flags, err)
		}
	}
}

// A placeholder is removed only while it is what srt made: not once it
// holds something else, and not when its inode number was reused (the
// birth time differs).
func TestLetGoOnlyOurs(t *testing.T) {
	home := t.TempDir()
	r := openIn(t, t.TempDir())
	c := acquire(t, r, Want{Path: filepath.Join(home, "a")}, Want{Path: filepath.Join(home, "d"), Dir: true})
	os.WriteFile(filepath.Join(home, "a"), []byte("the user's now"), 0o644)
	os.WriteFile(filepath.Join(home, "d", "x"), nil, 0o644)
	c.Release()
	for _, p := range []string{"a", "d/x"} {
		if _, err := os.Stat(filepath.Join(home, p)); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
	// A dead run's journal with the identity of an empty file of the
	// user's, born at another time.
	victim := filepath.Join(home, "empty")
	os.WriteFile(victim, nil, 0o644)
	id, _ := identity(victim)
	if id.Btime == 0 {
		t.Skip("this filesystem keeps no birth time")
	}
	j := &journal{PID: 999999999, StartTime: 1, Entries: []entry{{Path: victim, Dev: id.Dev, Ino: id.Ino, Btime: id.Btime + 1}}, name: "run-999999999-1-1.json"}
	j.write(r.dir)
	r.sweep()
	if _, err := os.Stat(victim); err != nil {
		t.Fatalf("a file with a reused inode number was removed: %v", err)
	}
	// Control: with its birth time, it is collected.
	j.Entries[0].Btime = id.Btime
	j.write(r.dir)
	r.sweep()
	if _, err := os.Stat(victim); !os.IsNotExist(err) {
		t.Fatalf("control: the dead run's placeholder was not collected: %v", err)
	}
}

// helperEnv makes the test binary a run that acquires placeholders and
// waits to be killed (TestHelperRun).
const helperEnv = "SRT_PLACEHOLDERS_HELPER"

func TestHelperRun(t *testing.T) {
	paths := os.Getenv(helperEnv)
	if paths == "" {
		t.Skip("a helper process of TestKilledHolder")
	}
	r, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	var wants []Want
	for _, p := range strings.Split(paths, ":") {
		wants = append(wants, Want{Path: p})
	}
	if _, err := r.Acquire(wants); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("ready\n")
	time.Sleep(time.Hour) // until killed
}

// startHelper runs a helper holding paths with state directory in tmp.
func startHelper(t *testing.T, tmp string, paths ...string) *exec.Cmd {
	t.Helper()
	return spawn(t, "TestHelperRun", "TMPDIR="+tmp, helperEnv+"="+strings.Join(paths, ":"))
}

// spawn runs the test binary as the helper process of test run, with env
// added to the environment, once it says it is ready.
func spawn(t *testing.T, run string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+run+"$")
	cmd.Env = append(os.Environ(), env...)
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		t.Fatalf("the helper process of %s did not start: %q", run, line)
	}
	return cmd
}

func kill(cmd *exec.Cmd) {
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
}

// A run killed with SIGKILL drops its locks with its descriptors: a sweep
// of its state directory removes what no one holds, and leaves what
// another run (of another state directory) holds, adopted or taken for
// the user's file, to it or to a later sweep.
func TestKilledHolder(t *testing.T) {
	home := t.TempDir()
	tmpA, tmpB := t.TempDir(), t.TempDir()
	alone, adopted, late := filepath.Join(home, "alone"), filepath.Join(home, "adopted"), filepath.Join(home, "late")

	a := startHelper(t, tmpA, alone, adopted, late)
	rb := openIn(t, tmpB)
	cb := acquire(t, rb, Want{Path: adopted})
	if len(cb.j.Entries) != 1 || !cb.j.Entries[0].Shared {
		t.Fatalf("B did not adopt the live run's placeholder: %+v", cb.j.Entries)
	}
	kill(a)
	// The marker went with the dead run: B takes this one for the user's
	// file, and holds it.
	cl := acquire(t, rb, Want{Path: late})
	if len(cl.j.Entries) != 0 {
		t.Fatalf("a dead run's placeholder was adopted: %+v", cl.j.Entries)
	}
	ra := openIn(t, tmpA) // sweeps
	if _, err := os.Lstat(alone); !os.IsNotExist(err) {
		t.Errorf("the sweep left the dead run's unheld placeholder: %v", err)
	}
	for _, p := range []string{adopted, late} {
		if _, err := os.Lstat(p); err != nil {
			t.Fatalf("the sweep removed %s, which a live run holds: %v", p, err)
		}
	}
	// B, the last holder of what it adopted, removes it; what it took for
	// the user's it leaves, to the next sweep of the dead run's state
	// directory.
	cb.Release()
	cl.Release()
	if _, err := os.Lstat(adopted); !os.IsNotExist(err) {
		t.Errorf("B left the placeholder it adopted: %v", err)
	}
	if _, err := os.Lstat(late); err != nil {
		t.Fatalf("B removed what it took for the user's file: %v", err)
	}
	ra.sweep()
	if _, err := os.Lstat(late); !os.IsNotExist(err) {
		t.Errorf("the next sweep left the dead run's placeholder: %v", err)
	}
	if js := journalsOf(ra); len(js) != 0 {
		t.Errorf("the dead run's journal outlived its placeholders: %+v", js)
	}
}

// A killed adopter is collected by its own state directory's sweep: its
// journal names what it adopted.
func TestKilledAdopter(t *testing.T) {
	home := t.TempDir()
	p := filepath.Join(home, ".bashrc")
	tmpA, tmpB := t.TempDir(), t.TempDir()
	ra := openIn(t, tmpA)
	ca := acquire(t, ra, Want{Path: p})
	b := startHelper(t, tmpB, p)
	ca.Release() // B holds it: A leaves it
	if _, err := os.Lstat(p); err != nil {
		t.Fatalf("A removed what B holds: %v", err)
	}
	kill(b)
	openIn(t, tmpB) // B's state directory's sweep
	if _, err := os.Lstat(p); !os.IsNotExist(err) {
		t.Errorf("the adopter's sweep left the placeholder: %v", err)
	}
}

// Runs of four state directories take and let go of the same placeholders
// at once, over and over: while a run holds one, it stays the very file or
// directory the run holds (no other run removes it under it), and once all
// have ended and their state directories have been swept, none is left.
func TestConcurrentRunsKeepWhatIsHeld(t *testing.T) {
	home := t.TempDir()
	wants := []Want{{Path: filepath.Join(home, "d"), Dir: true}, {Path: filepath.Join(home, "d", "f")}, {Path: filepath.Join(home, "c"), Content: "."}}
	var regs []*Registry
	for i := 0; i < 4; i++ {
		regs = append(regs, openIn(t, t.TempDir()))
	}
	errs := make(chan string, 100)
	done := make(chan bool)
	for _, r := range regs {
		go func(r *Registry) {
			defer func() { done <- true }()
			for i := 0; i < 150; i++ {
				c, err := r.Acquire(wants)
				if err != nil {
					errs <- err.Error()
					return
				}
				for n := 0; n < 3; n++ {
					for _, w := range wants {
						dev, ino, ok := c.Identity(w.Path)
						id, there := identity(w.Path)
						if !ok || !there || id.Dev != dev || id.Ino != ino {
							errs <- w.Path + " changed or went while a run held it"
							c.Release()
							return
						}
					}
					time.Sleep(time.Duration(i%3) * 100 * time.Microsecond)
				}
				if err := c.Release(); err != nil {
					errs <- err.Error()
				}
			}
		}(r)
	}
	for range regs {
		<-done
	}
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	for _, r := range regs {
		r.sweep()
	}
	for _, w := range wants {
		if _, err := os.Lstat(w.Path); !os.IsNotExist(err) {
			t.Errorf("%s left after every run ended and was swept: %v", w.Path, err)
		}
	}
}

// lockerEnv makes the test binary a process that takes one lock on a path
// and waits to be killed (TestHelperLocker): kind:path.
const lockerEnv = "SRT_PLACEHOLDERS_LOCKER"

// The locks TestMarkerOnlyOFDWrite has another process take.
var lockerKinds = map[string]struct {
	cmd   int
	typ   int16
	start int64
	len   int64
	rw    bool
}{
	"ofd-write":       {unix.F_OFD_SETLK, unix.F_WRLCK, markerBase + 12345, 1, true},
	"ofd-read":        {unix.F_OFD_SETLK, unix.F_RDLCK, 0, 0, false},
	"ofd-read-range":  {unix.F_OFD_SETLK, unix.F_RDLCK, markerBase + 12345, 1, false},
	"posix-read":      {unix.F_SETLK, unix.F_RDLCK, 0, 0, false},
	"posix-write":     {unix.F_SETLK, unix.F_WRLCK, markerBase + 12345, 1, true},
	"posix-write-all": {unix.F_SETLK, unix.F_WRLCK, 0, 0, true},
	"ofd-read-dir":    {unix.F_OFD_SETLK, unix.F_RDLCK, dirMarker, 1, false},
	"posix-read-dir":  {unix.F_SETLK, unix.F_RDLCK, 0, 0, false},
}

func TestHelperLocker(t *testing.T) {
	arg := os.Getenv(lockerEnv)
	if arg == "" {
		t.Skip("a helper process of TestMarkerOnlyOFDWrite")
	}
	kind, p, _ := strings.Cut(arg, ":")
	k := lockerKinds[kind]
	flags := unix.O_RDONLY
	if k.rw {
		flags = unix.O_RDWR
	}
	fd, err := unix.Open(p, flags, 0)
	if err != nil {
		t.Fatal(err)
	}
	lk := unix.Flock_t{Type: k.typ, Start: k.start, Len: k.len}
	if err := unix.FcntlFlock(uintptr(fd), k.cmd, &lk); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("ready\n")
	time.Sleep(time.Hour) // until killed
}

// Only an open-file-description write lock in the marker range, which
// needs a descriptor open for writing, marks a file as another run's
// placeholder: a process that can only read a file of the user's cannot
// have srt adopt it and, as its last holder, remove it. Read locks (OFD
// or POSIX) and POSIX write locks by another process are no marker; the
// OFD write lock is (the control). For a directory, which cannot be
// opened for writing, the marker is an OFD read lock, and srt removes an
// adopted one only while it is empty: never what the user keeps in it.
func TestMarkerOnlyOFDWrite(t *testing.T) {
	for _, c := range []struct {
		kind   string
		dir    bool
		inside bool // the directory holds a file of the user's
		marked bool
		kept   bool // though marked
	}{
		{kind: "ofd-read"},
		{kind: "ofd-read-range"},
		{kind: "posix-read"},
		{kind: "posix-write"},
		{kind: "posix-write-all"},
		{kind: "ofd-write", marked: true},
		{kind: "posix-read-dir", dir: true},
		{kind: "ofd-read-dir", dir: true, inside: true, marked: true, kept: true},
		{kind: "ofd-read-dir", dir: true, marked: true},
	} {
		home := t.TempDir()
		p := filepath.Join(home, "empty")
		if c.dir {
			os.Mkdir(p, 0o755)
			if c.inside {
				os.WriteFile(filepath.Join(p, "x"), nil, 0o644)
			}
		} else {
			os.WriteFile(p, nil, 0o644)
		}
		cmd := spawn(t, "TestHelperLocker", lockerEnv+"="+c.kind+":"+p)
		if got := Held(p); got != c.marked {
			t.Errorf("%s (inside %v): Held = %v, want %v", c.kind, c.inside, got, c.marked)
		}
		claim := acquire(t, openIn(t, t.TempDir()), Want{Path: p, Dir: c.dir})
		if adopted := len(claim.j.Entries) == 1; adopted != c.marked {
			t.Errorf("%s (inside %v): adopted = %v, want %v", c.kind, c.inside, adopted, c.marked)
		}
		claim.Release()
		_, err := os.Lstat(p)
		if gone := os.IsNotExist(err); gone != (c.marked && !c.kept) {
			t.Errorf("%s (inside %v): removed = %v, want %v (%v)", c.kind, c.inside, gone, c.marked && !c.kept, err)
		}
		if _, err := os.Stat(filepath.Join(p, "x")); c.inside && err != nil {
			t.Errorf("%s: the user's file in the directory went: %v", c.kind, err)
		}
		kill(cmd)
	}
}
