package plan

import "syscall"

// ctimeOf is st's change time in ns since the epoch (ctime_linux.go).
func ctimeOf(st *syscall.Stat_t) int64 { return st.Ctimespec.Nano() }
