package landlock

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestAccessByABI(t *testing.T) {
	const (
		abi1 = 0x1ff2 // WRITE_FILE, REMOVE_*, MAKE_*
		read = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	)
	cases := []struct {
		abi        int
		dir, file  uint64
		withScopes uint64
	}{
		{1, abi1, unix.LANDLOCK_ACCESS_FS_WRITE_FILE, 0},
		{2, abi1 | unix.LANDLOCK_ACCESS_FS_REFER, unix.LANDLOCK_ACCESS_FS_WRITE_FILE, 0},
		{3, 0x7ff2, unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE, 0},
		{4, 0x7ff2, 0x4002, 0},
		{5, 0xfff2, 0xc002, 0},
		{6, 0xfff2, 0xc002, unix.LANDLOCK_SCOPE_SIGNAL | unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET},
		{7, 0xfff2, 0xc002, 3},
	}
	for _, c := range cases {
		if got := handledAccess(c.abi); got != c.dir {
			t.Errorf("ABI %d: handled %#x, want %#x", c.abi, got, c.dir)
		}
		if got := fileAccess(c.abi); got != c.file {
			t.Errorf("ABI %d: file rights %#x, want %#x", c.abi, got, c.file)
		}
		if handledAccess(c.abi)&read != 0 {
			t.Errorf("ABI %d: handles a read or execute right", c.abi)
		}
		if got := scopes(c.abi, Rules{ScopeSignals: true, ScopeAbstractUnix: true}); got != c.withScopes {
			t.Errorf("ABI %d: scopes %#x, want %#x", c.abi, got, c.withScopes)
		}
		if got := scopes(c.abi, Rules{}); got != 0 {
			t.Errorf("ABI %d: scopes %#x without asking", c.abi, got)
		}
	}
}

func TestABI(t *testing.T) {
	abi, err := ABI()
	if err != nil {
		t.Fatalf("ABI: %v (this host is expected to have Landlock)", err)
	}
	if abi < 1 {
		t.Fatalf("ABI %d", abi)
	}
	t.Logf("Landlock ABI %d", abi)
}
