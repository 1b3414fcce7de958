//go:build linux

package limits

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/srt-sandbox/srt/internal/initstage"
	"github.com/srt-sandbox/srt/settings"
)

func rl(name string, cur, max uint64) initstage.Rlimit {
	return initstage.Rlimit{Name: name, Cur: cur, Max: max}
}

func TestDecide(t *testing.T) {
	bwrapUser := Offer{UserNamespace: true, NprocPerNamespace: true, Tmpfs: true, RAM: 8 << 30, NoCgroup: "none here"}
	bwrapRoot := bwrapUser
	bwrapRoot.Root = true
	withCgroup := bwrapRoot
	withCgroup.Cgroup = &Cgroup{Dir: "/sys/fs/cgroup/x", Memory: true, Pids: true}
	landlock := Offer{RAM: 8 << 30, NoCgroup: "none here"}
	for _, c := range []struct {
		name   string
		l      settings.Limits
		o      Offer
		err    string // the refused key, or ""
		want   Applied
		reason string
	}{
		{name: "none: TMPDIR's default", o: bwrapUser, want: Applied{TmpdirBytes: 2 << 30}},
		{name: "default capped at 4 GiB", o: Offer{Tmpfs: true, RAM: 64 << 30}, want: Applied{TmpdirBytes: 4 << 30}},
		{name: "rlimits as a user", o: bwrapUser,
			l: settings.Limits{Processes: 50, MemoryMiB: 100, TmpdirMiB: 8, OpenFiles: 20, CPUSeconds: 1, WallSeconds: 3},
			want: Applied{
				Rlimits:     []initstage.Rlimit{rl("nproc", 66, 66), rl("data", 100<<20, 100<<20), rl("nofile", 20, 20), rl("cpu", 1, 2)},
				TmpdirBytes: 8 << 20, Wall: 3 * time.Second,
			}},
		{name: "processes as root without cgroup", o: bwrapRoot, l: settings.Limits{Processes: 50}, err: "limits.processes", reason: "does not apply RLIMIT_NPROC to root"},
		{name: "processes without a user namespace", o: landlock, l: settings.Limits{Processes: 50}, err: "limits.processes", reason: "no user namespace"},
		{name: "processes on an old kernel", o: Offer{UserNamespace: true, Tmpfs: true}, l: settings.Limits{Processes: 50}, err: "limits.processes", reason: "older than Linux 5.14"},
		{name: "tmpdirMiB without a tmpfs", o: landlock, l: settings.Limits{TmpdirMiB: 8}, err: "limits.tmpdirMiB", reason: "cannot mount"},
		{name: "no TMPDIR size without a tmpfs", o: landlock, l: settings.Limits{MemoryMiB: 1}, want: Applied{Rlimits: []initstage.Rlimit{rl("data", 1<<20, 1<<20)}}},
		{name: "cgroup as root", o: withCgroup, l: settings.Limits{Processes: 50, MemoryMiB: 100},
			want: Applied{CgroupPids: 66, CgroupMemory: 100 << 20, TmpdirBytes: 2 << 30}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, err := Decide(c.l, c.o)
			if c.err != "" {
				var le *Error
				if !errors.As(err, &le) || le.Key != c.err || !strings.Contains(err.Error(), c.reason) || !errors.Is(err, settings.ErrInvalid) {
					t.Fatalf("got %v, want %s refused (%s)", err, c.err, c.reason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(a.How) == 0 {
				t.Fatal("no description")
			}
			a.How = nil
			if !reflect.DeepEqual(*a, c.want) {
				t.Fatalf("got %+v\nwant %+v", *a, c.want)
			}
		})
	}
}
