//go:build linux

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/initstage"
)

// raceVictims is how many sandboxes start while the swapper runs, and how
// many start at once.
const raceVictims, raceParallel = 40, 4

// raceRefusals are the ways a victim may fail to start when a swap lands
// while it starts: srt's plan or executor saw the granted path change;
// bubblewrap failed (its own check of the bound descriptor, "Race
// condition binding dirfd", or a path it resolved vanishing under it); or
// the init stage found a writable mount srt did not grant.
var raceRefusals = []string{
	"a granted path changed while the sandbox was set up",
	"srt: bubblewrap could not build the sandbox",
	"is not one srt granted",
	"could not be identified while it was being renamed",
}

// TestEscapeRaceSwapGrant (item 7, the race): a concurrent sandbox that may
// write p swaps p/build and a symlink to an outside directory with
// renameat2(RENAME_EXCHANGE) in a loop, while sandboxes with allowWrite
// ["<p>/build"] start and try to write into the outside directory, directly
// and through build. Binding by path, the check and the mount could be
// separated by a swap (won on the second try in the review); srt now binds
// the descriptor of what it checked. No write may reach the outside
// directory; a victim either runs with build (or nothing) writable, or
// refuses to start.
func TestEscapeRaceSwapGrant(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		outside := w.mkdir("outside")
		p := w.mkdir("home/proj/p")
		build := w.mkdir("home/proj/p/build")
		// Relative: an absolute link would resolve against bubblewrap's
		// set-up root while it mounts, and the destination would vanish.
		w.symlink("../../../outside", "home/proj/p/swap")
		stop := filepath.Join(p, "stop")

		swapper := w.command([]string{"PROBE=" + probeBin(t)}, "-s", w.write("swapper.json", pathSettings(nil, nil, []string{p}, nil)),
			"--", probeBin(t), "exchange-loop", build, filepath.Join(p, "swap"), stop, "90")
		var swapOut, swapErr strings.Builder
		swapper.Stdout, swapper.Stderr = &swapOut, &swapErr
		if err := swapper.Start(); err != nil {
			t.Fatal(err)
		}
		swapDone := make(chan struct{})
		go func() { swapper.Wait(); close(swapDone) }()
		t.Cleanup(func() {
			os.WriteFile(stop, nil, 0o644)
			<-swapDone
		})
		waitFor(t, func() bool {
			fi, err := os.Lstat(build)
			return err == nil && fi.Mode()&os.ModeSymlink != 0
		}, "the swapper to start swapping")

		victim := w.write("victim.json", pathSettings(nil, nil, []string{build}, nil))
		results := make([]result, raceVictims)
		var wg sync.WaitGroup
		sem := make(chan struct{}, raceParallel)
		for i := range results {
			wg.Add(1)
			sem <- struct{}{}
			go func(i int) {
				defer func() { <-sem; wg.Done() }()
				script := fmt.Sprintf(`"$PROBE" create %s/out-%d; "$PROBE" create %s/in-%d`, outside, i, build, i)
				cmd := w.command([]string{"PROBE=" + probeBin(t)}, "-s", victim, "-c", script)
				var stdout, stderr strings.Builder
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				cmd.Run()
				results[i] = result{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
			}(i)
		}
		wg.Wait()
		os.WriteFile(stop, nil, 0o644)
		<-swapDone
		if !strings.Contains(swapOut.String(), "RESULT exchange ok") {
			t.Fatalf("the swapper did not swap to the end:\n%s%s", swapOut.String(), swapErr.String())
		}

		ro := refused("EROFS")
		ran, landed, refused := 0, 0, map[string]int{}
		for i, r := range results {
			pr := newProbeRun(r)
			if _, ok := pr.steps["create"]; ok {
				ran++
				// Both creates report as "create": the first line is the
				// outside directory's.
				first := strings.Fields(strings.SplitN(r.stdout, "RESULT create ", 2)[1])[0]
				switch {
				case first == ro:
				case first == "ok" && exists(fmt.Sprintf("%s/out-%d", build, i)):
					// bubblewrap put the granted directory itself at the
					// outside directory's path (its destination resolved
					// through the swapped-in link): the write landed in
					// the grant, and the outside directory is untouched.
					landed++
				default:
					t.Errorf("victim %d: the create in the outside directory: want %s (or a write into build), got %s\n%s", i, ro, first, r)
				}
				continue
			}
			known := ""
			for _, k := range raceRefusals {
				if strings.Contains(r.stderr, k) {
					known = k
				}
			}
			if r.code == 0 || known == "" {
				t.Errorf("victim %d neither ran the probe nor refused in a known way:\n%s", i, r)
				continue
			}
			refused[known]++
		}
		ents, _ := os.ReadDir(outside)
		for _, e := range ents {
			t.Errorf("ESCAPE: %s/%s was written by a victim", outside, e.Name())
		}
		t.Logf("%d victims ran (%d with build bound at the outside path), refusals: %v; %s", ran, landed, refused, strings.TrimSpace(strings.SplitN(swapOut.String(), "\n", 2)[0]))

		// Control: the same create reaches the outside directory where it
		// is granted.
		want(t, w.probe(pathSettings(nil, nil, []string{outside}, nil), "create", outside+"/granted"), "create", "ok")
		if !exists(outside + "/granted") {
			t.Fatal("control: the create did not reach the host")
		}
	})
}

// TestInitRefusesUngrantedWritableMount: the init stage's own check, which
// catches what bubblewrap's --bind-fd check misses (bubblewrap binds the
// descriptor's path, resolved again, and checks the mount by path: a swap
// back in between passes it). A sandbox built by hand with one directory
// bound writable is refused when that directory is not the one granted,
// and runs when it is.
func TestInitRefusesUngrantedWritableMount(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		granted, other := w.mkdir("granted"), w.mkdir("other")
		f, err := os.Open("/proc/self/mountinfo")
		if err != nil {
			t.Fatal(err)
		}
		ms, err := initstage.ParseMountinfo(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		spec := initstage.Spec{CheckMounts: true, Writable: []initstage.FileID{fileID(t, granted)}}
		for _, m := range ms {
			spec.HostDevs = append(spec.HostDevs, unix.Mkdev(m.Major, m.Minor))
		}
		run := func(bound string) result {
			args := append([]string{"--unshare-user", "--unshare-pid", "--as-pid-1", "--die-with-parent", "--ro-bind", "/", "/",
				"--dev", "/dev", "--proc", "/proc", "--bind", bound, bound, "--", filepath.Join(bin, "srt")}, initstage.Args(spec, []string{"/bin/true"})...)
			cmd := exec.Command("bwrap", args...)
			w.asRunner(cmd)
			// The init stage's channel (descriptor 3): its end-of-file
			// would stop the command at once.
			r, wr, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer wr.Close()
			cmd.ExtraFiles = []*os.File{r}
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.Run()
			r.Close()
			return result{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
		}
		expect(t, run(other), 125, "srt: init stage: the writable mount at "+other+" ("+other+") is not one srt granted")
		expect(t, run(granted), 0, "!srt:")
	})
}

func fileID(t *testing.T, p string) initstage.FileID {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	return initstage.FileID{Dev: uint64(st.Dev), Ino: st.Ino}
}
