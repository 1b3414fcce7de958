package plan

import "syscall"

// ctimeOf is st's change time in ns since the epoch (Stat_t's field is
// named differently on macOS: ctime_darwin.go).
func ctimeOf(st *syscall.Stat_t) int64 { return st.Ctim.Nano() }
