package initstage

import (
	"reflect"
	"testing"
)

// The init stage reads back the rlimits srt writes, and the re-exec's
// argv carries them and the command.
func TestRlimitArgs(t *testing.T) {
	limits := []Rlimit{{"nproc", 66, 66}, {"data", 100 << 20, 100 << 20}, {"cpu", 1, 2}}
	spec, command, err := parseArgs(Args(Spec{Rlimits: limits}, []string{"/bin/sh", "-c", "x"}))
	if err != nil || !reflect.DeepEqual(spec.Rlimits, limits) || !reflect.DeepEqual(command, []string{"/bin/sh", "-c", "x"}) {
		t.Fatalf("%+v %q %v", spec, command, err)
	}
	path, argv := rlimitArgv(9, limits, command)
	fd, got, cmd, err := parseRlimitArgs(argv[1:])
	if path != "/proc/self/fd/9" || fd != 9 || err != nil || !reflect.DeepEqual(got, limits) || !reflect.DeepEqual(cmd, command) {
		t.Fatalf("%s %d %+v %q %v", path, fd, got, cmd, err)
	}
	for _, bad := range []string{"nproc:1", "as:1:1", "nofile:2:1", "cpu:-1:1", "nproc:1:1:1", ":1:1"} {
		if _, err := ParseRlimit(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// ParseRlimit accepts only what String writes.
func FuzzParseRlimit(f *testing.F) {
	for _, s := range []string{"nproc:66:66", "data:104857600:104857600", "cpu:1:2", "nofile:0:0", "as:1:1", "cpu:2:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRlimit(s)
		if err != nil {
			return
		}
		if r.Cur > r.Max {
			t.Fatalf("%q: soft above hard accepted", s)
		}
		back, err := ParseRlimit(r.String())
		if err != nil || back != r {
			t.Fatalf("%q: %+v does not read back: %+v %v", s, r, back, err)
		}
	})
}
