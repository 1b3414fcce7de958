package settings

// Limits is the limits block (srt's extension): bounds on what the
// command may consume. A zero field is no limit, but for TmpdirMiB, whose
// zero is srt's default size of TMPDIR (package limits).
type Limits struct {
	// Processes bounds the sandbox's processes and threads (tasks).
	Processes int
	// MemoryMiB bounds memory, in MiB (of the whole sandbox with a
	// cgroup, of each process without).
	MemoryMiB int
	// TmpdirMiB is the size of the in-memory filesystem holding TMPDIR.
	TmpdirMiB int
	// OpenFiles bounds the descriptors each process may hold.
	OpenFiles int
	// CPUSeconds bounds the CPU time of each process.
	CPUSeconds int
	// WallSeconds bounds the command's time: srt stops it past this.
	WallSeconds int
}

// Any reports whether the block asks for a limit.
func (l Limits) Any() bool { return l != Limits{} }

// The largest value of each key of the limits block: far above any real
// need, below what the kernel's own maxima would refuse or overflow.
const (
	MaxProcesses   = 4194304     // PID_MAX_LIMIT
	MaxMemoryMiB   = 16 << 20    // 16 TiB
	MaxTmpdirMiB   = 16 << 20    // 16 TiB
	MaxOpenFiles   = 1048576     // the kernel's default fs.nr_open
	MaxCPUSeconds  = 366 * 86400 // a year
	MaxWallSeconds = 366 * 86400 // a year
)

// limits checks the limits block: each key a positive integer up to its
// maximum.
func (c *checker) limits(p path, v *value, l *Limits) {
	num := func(dst *int, max int) func(p path, v *value) {
		return func(p path, v *value) {
			if n, ok := c.Integer(p, v, 1, int64(max)); ok {
				*dst = n
			}
		}
	}
	c.Object(p, v, []field{
		{Name: "processes", Check: num(&l.Processes, MaxProcesses)},
		{Name: "memoryMiB", Check: num(&l.MemoryMiB, MaxMemoryMiB)},
		{Name: "tmpdirMiB", Check: num(&l.TmpdirMiB, MaxTmpdirMiB)},
		{Name: "openFiles", Check: num(&l.OpenFiles, MaxOpenFiles)},
		{Name: "cpuSeconds", Check: num(&l.CPUSeconds, MaxCPUSeconds)},
		{Name: "wallSeconds", Check: num(&l.WallSeconds, MaxWallSeconds)},
	})
}
