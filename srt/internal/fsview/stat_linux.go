package fsview

import "syscall"

// newStat is a memory file's Stat_t: Stat_t's fields differ between
// platforms (stat_darwin.go).
func newStat(mode uint32, ino uint64, uid, gid uint32) *syscall.Stat_t {
	st := &syscall.Stat_t{Dev: memDev, Ino: ino, Nlink: 1, Mode: mode, Uid: uid, Gid: gid}
	st.Ctim.Sec = int64(ino) // a change time of its own for each file
	return st
}
