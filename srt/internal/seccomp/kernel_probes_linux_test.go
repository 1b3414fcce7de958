package seccomp

import (
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// This file holds the probes of the keyring, set-id and datagram-socketpair
// rules. Each works on objects of its own (a fresh file in a fresh
// directory, a key in the process keyring), so running it before the filter
// changes nothing anyone else sees.

// beforeOK are the probes whose answer without the filter must be OK: the
// same call works where the rule is lifted, so the EPERM after it is the
// filter's.
var beforeOK = map[string]bool{
	"socketpair(AF_UNIX, SOCK_DGRAM)":               true,
	"socketpair(AF_UNIX, SOCK_RAW|SOCK_CLOEXEC)":    true,
	"socketpair(AF_UNIX, SOCK_SEQPACKET)":           true,
	"keyctl(GET_KEYRING_ID, @u, create)":            true,
	"add_key(user, process keyring)":                true,
	"chmod(own file, 04755)":                        true,
	"fchmod(own file, 02755)":                       true,
	"fchmodat(own file, 06755)":                     true,
	"openat(O_CREAT|O_EXCL, 04755)":                 true,
	"mknodat(S_IFREG|02755)":                        true,
	"openat2(/, O_RDONLY)":                          true,
	"chmod(own file, 0755)":                         true,
	"openat(O_CREAT|O_EXCL, 0644)":                  true,
	"socketpair(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC)": true,
}

var kernelProbes = []probe{
	{"socketpair(AF_UNIX, SOCK_DGRAM)", true, "EPERM", func() string { return pair(unix.SOCK_DGRAM) }},
	{"socketpair(AF_UNIX, SOCK_RAW|SOCK_CLOEXEC)", true, "EPERM", func() string { return pair(unix.SOCK_RAW | unix.SOCK_CLOEXEC) }},
	{"socketpair(AF_UNIX, SOCK_SEQPACKET)", true, "OK", func() string { return pair(unix.SOCK_SEQPACKET) }},
	{"socketpair(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC)", true, "OK", func() string { return pair(unix.SOCK_STREAM | unix.SOCK_CLOEXEC) }},
	{"keyctl(GET_KEYRING_ID, @u, create)", true, "EPERM", func() string {
		_, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_USER_KEYRING, true)
		return errName(err)
	}},
	{"add_key(user, process keyring)", true, "EPERM", func() string {
		_, err := unix.AddKey("user", "srt-seccomp-test", []byte("x"), unix.KEY_SPEC_PROCESS_KEYRING)
		return errName(err)
	}},
	{"request_key(user, process keyring)", false, "EPERM", func() string {
		_, err := unix.RequestKey("user", "srt-seccomp-test-none", "", unix.KEY_SPEC_PROCESS_KEYRING)
		return errName(err)
	}},
	{"chmod(own file, 04755)", true, "EPERM", func() string {
		return inScratch(func(dir string) error { return unix.Chmod(file(dir), 0o4755) })
	}},
	{"chmod(own file, 0755)", true, "OK", func() string {
		return inScratch(func(dir string) error { return unix.Chmod(file(dir), 0o755) })
	}},
	{"fchmod(own file, 02755)", true, "EPERM", func() string {
		return inScratch(func(dir string) error {
			f, err := os.Open(file(dir))
			if err != nil {
				return err
			}
			defer f.Close()
			return unix.Fchmod(int(f.Fd()), 0o2755)
		})
	}},
	{"fchmodat(own file, 06755)", true, "EPERM", func() string {
		return inScratch(func(dir string) error { return unix.Fchmodat(unix.AT_FDCWD, file(dir), 0o6755, 0) })
	}},
	{"openat(O_CREAT|O_EXCL, 04755)", true, "EPERM", func() string {
		return inScratch(func(dir string) error { return create(filepath.Join(dir, "new"), 0o4755) })
	}},
	{"openat(O_CREAT|O_EXCL, 0644)", true, "OK", func() string {
		return inScratch(func(dir string) error { return create(filepath.Join(dir, "new"), 0o644) })
	}},
	{"mknodat(S_IFREG|02755)", true, "EPERM", func() string {
		return inScratch(func(dir string) error {
			return unix.Mknodat(unix.AT_FDCWD, filepath.Join(dir, "node"), unix.S_IFREG|0o2755, 0)
		})
	}},
	{"openat2(/, O_RDONLY)", true, "ENOSYS", func() string {
		how := unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC}
		fd, _, e := unix.Syscall6(unix.SYS_OPENAT2, uintptr(atFDCWD), cstr("/"), uintptr(unsafe.Pointer(&how)), unsafe.Sizeof(how), 0, 0)
		if e != 0 {
			return unix.ErrnoName(e)
		}
		unix.Close(int(fd))
		return "OK"
	}},
}

func pair(typ int) string {
	fds, err := unix.Socketpair(unix.AF_UNIX, typ, 0)
	if err == nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
	}
	return errName(err)
}

// inScratch runs f in a fresh directory holding one file, "f", of mode 0644,
// and removes the directory.
func inScratch(f func(dir string) error) string {
	dir, err := os.MkdirTemp("", "srt-seccomp-probe-")
	if err != nil {
		return "scratch: " + err.Error()
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(file(dir), nil, 0o644); err != nil {
		return "scratch: " + err.Error()
	}
	return errName(f(dir))
}

func file(dir string) string { return filepath.Join(dir, "f") }

func create(path string, mode uint32) error {
	fd, err := unix.Openat(unix.AT_FDCWD, path, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, mode)
	if err == nil {
		unix.Close(fd)
	}
	return err
}
