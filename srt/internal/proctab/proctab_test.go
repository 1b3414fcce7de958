package proctab

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
)

func TestParseStat(t *testing.T) {
	for _, c := range []struct {
		line string
		want Process
		ok   bool
	}{
		{"12 (bwrap) S 7 12 12 0 -1", Process{12, 7, "bwrap", 'S'}, true},
		{"40 (a (b) c) Z 1 40", Process{40, 1, "a (b) c", 'Z'}, true},
		{"5 (x) R", Process{}, false},
		{"(x) R 1", Process{}, false},
		{"5 x) R 1", Process{}, false},
		{"5 (x) RR 1", Process{}, false},
		{"5 (x) R one", Process{}, false},
	} {
		got, err := parseStat([]byte(c.line))
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("%q: %+v, %v; want %+v (ok %v)", c.line, got, err, c.want, c.ok)
		}
	}
}

// TestChildren finds a child of this process, also once it is a zombie.
func TestChildren(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	find := func() (Process, bool) {
		for _, p := range Children(os.Getpid()) {
			if p.PID == cmd.Process.Pid {
				return p, true
			}
		}
		return Process{}, false
	}
	if p, ok := find(); !ok || p.Comm != "sleep" || p.State == 'Z' {
		t.Fatalf("the running child: %+v %v", p, ok)
	}
	cmd.Process.Kill()
	for i := 0; ; i++ {
		if p, ok := find(); ok && p.State == 'Z' {
			if p.String() != "pid "+strconv.Itoa(p.PID)+" (sleep) state Z" {
				t.Errorf("String: %q", p)
			}
			return
		}
		if i == 500 {
			t.Fatal("the killed child never showed as a zombie")
		}
		exec.Command("true").Run() // a few ms
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("12 (bwrap) S 7 12 12 0 -1"))
	f.Add([]byte("40 (a (b) c) Z 1 40"))
	f.Add([]byte("5 ()) R 1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parseStat(data)
		if err != nil {
			return
		}
		// What it read is what the line says, from both ends.
		line := strconv.Itoa(p.PID) + " (" + p.Comm + ") " + string([]byte{p.State}) + " " + strconv.Itoa(p.PPID)
		if q, err := parseStat([]byte(line)); err != nil || q != p {
			t.Fatalf("%q read as %+v, which renders as %q and reads back as %+v, %v", data, p, line, q, err)
		}
	})
}
