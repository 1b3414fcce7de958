package initstage

import (
	"strings"
	"testing"
)

// sandboxMounts is a sandbox's mountinfo as bubblewrap leaves it: the
// host's /dev copied with "/" (98, with its /dev/shm and /dev/pts still
// writable) under bubblewrap's fresh /dev (103, on 98's root), a grant and
// a path with a space.
const sandboxMounts = `85 40 254:0 / / ro,nosuid,nodev,relatime - ext4 /dev/vda rw
98 85 0:5 / /dev ro,nosuid,relatime - devtmpfs devtmpfs rw
99 98 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw
101 98 0:24 / /dev/pts rw,relatime - devpts devpts rw
103 98 0:41 / /dev rw,nosuid,nodev,relatime - tmpfs tmpfs rw,mode=755
104 103 0:6 /null /dev/null rw,nosuid,relatime - devtmpfs devtmpfs rw
113 85 0:43 / /proc rw,nosuid,nodev,noexec,relatime shared:7 master:3 - proc proc rw
120 85 254:0 /home/u/my\040proj /home/u/my\040proj rw,nosuid,nodev,relatime - ext4 /dev/vda rw
121 120 254:0 /home/u/my\040proj/.git/hooks /home/u/my\040proj/.git/hooks ro,nosuid,nodev,relatime - ext4 /dev/vda rw
`

func TestParseMountinfo(t *testing.T) {
	ms, err := ParseMountinfo(strings.NewReader(sandboxMounts))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 9 {
		t.Fatalf("%d mounts", len(ms))
	}
	g := ms[7]
	if g.ID != 120 || g.Parent != 85 || g.Major != 254 || g.Minor != 0 || g.MountPoint != "/home/u/my proj" || g.Root != "/home/u/my proj" || g.ReadOnly || g.FSType != "ext4" {
		t.Errorf("grant line: %+v", g)
	}
	if p := ms[6]; p.FSType != "proc" || p.ReadOnly {
		t.Errorf("optional fields: %+v", p)
	}
	if !ms[8].ReadOnly || !ms[0].ReadOnly {
		t.Error("ro not read")
	}
	if _, err := ParseMountinfo(strings.NewReader("1 2 3\n")); err == nil {
		t.Error("a malformed line was accepted")
	}
}

// TestCovered: the host's /dev copy and its children are hidden under
// bubblewrap's /dev (on 98's root); nothing else is, and bubblewrap's /dev
// and what is mounted on it are not.
func TestCovered(t *testing.T) {
	ms, _ := ParseMountinfo(strings.NewReader(sandboxMounts))
	got := covered(ms)
	for _, id := range []uint64{98, 99, 101} {
		if !got[id] {
			t.Errorf("mount %d is not covered", id)
		}
	}
	for _, id := range []uint64{85, 103, 104, 113, 120, 121} {
		if got[id] {
			t.Errorf("mount %d is covered", id)
		}
	}
}
