package seccomp

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// Arch is a syscall ABI that Build can generate a program for.
type Arch struct {
	name  string
	audit uint32 // AUDIT_ARCH_* value in seccomp_data.arch
	// x32Bit, when non-zero, marks syscall numbers of a second ABI that shares
	// this audit value (x32 on x86-64); calls with it set are refused.
	x32Bit uint32
	column int // index into sysnum's per-arch numbers
}

// The supported architectures.
var (
	ArchAMD64 = Arch{name: "amd64", audit: unix.AUDIT_ARCH_X86_64, x32Bit: 0x40000000, column: 0}
	ArchARM64 = Arch{name: "arm64", audit: unix.AUDIT_ARCH_AARCH64, column: 1}
)

// String returns the Go name of the architecture.
func (a Arch) String() string { return a.name }

// Native returns the architecture of the running program, or false when srt
// has no seccomp program for it.
func Native() (Arch, bool) {
	switch runtime.GOARCH {
	case "amd64":
		return ArchAMD64, true
	case "arm64":
		return ArchARM64, true
	}
	return Arch{}, false
}

// absent marks a syscall an architecture does not have (arm64 has only the
// *at forms of open, chmod and mknod); a rule on it is left out there.
const absent = ^uint32(0)

// sysnum holds the number of every syscall a rule names, as {amd64, arm64}.
// Numbers come from arch/x86/entry/syscalls/syscall_64.tbl and
// include/uapi/asm-generic/unistd.h; numbers 425 and up are shared by all
// architectures. They are written out (not taken from x/sys/unix) so the arm64
// program can be built and golden-tested on amd64 and vice versa.
var sysnum = map[string][2]uint32{
	"socket":            {41, 198},
	"kill":              {62, 129},
	"tkill":             {200, 130},
	"tgkill":            {234, 131},
	"rt_sigqueueinfo":   {129, 138},
	"rt_tgsigqueueinfo": {297, 240},
	"pidfd_open":        {434, 434},
	"shmget":            {29, 194},
	"shmat":             {30, 196},
	"shmctl":            {31, 195},
	"semget":            {64, 190},
	"semop":             {65, 193},
	"semctl":            {66, 191},
	"semtimedop":        {220, 192},
	"msgget":            {68, 186},
	"msgsnd":            {69, 189},
	"msgrcv":            {70, 188},
	"msgctl":            {71, 187},
	"mq_open":           {240, 180},
	"mq_timedsend":      {242, 182},
	"mq_timedreceive":   {243, 183},
	"mq_notify":         {244, 184},
	"socketpair":        {53, 199},
	"connect":           {42, 203},
	"listen":            {50, 201},
	"sendto":            {44, 206},
	"sendmsg":           {46, 211},
	"sendmmsg":          {307, 269},
	"io_uring_setup":    {425, 425},
	"io_uring_enter":    {426, 426},
	"io_uring_register": {427, 427},
	"unshare":           {272, 97},
	"clone":             {56, 220},
	"clone3":            {435, 435},
	"setns":             {308, 268},
	"mount":             {165, 40},
	"umount2":           {166, 39},
	"pivot_root":        {155, 41},
	"open_tree":         {428, 428},
	"move_mount":        {429, 429},
	"fsopen":            {430, 430},
	"fsconfig":          {431, 431},
	"fsmount":           {432, 432},
	"fspick":            {433, 433},
	"mount_setattr":     {442, 442},
	"open_tree_attr":    {467, 467},
	"ioctl":             {16, 29},
	"add_key":           {248, 217},
	"request_key":       {249, 218},
	"keyctl":            {250, 219},
	"chmod":             {90, absent},
	"fchmod":            {91, 52},
	"fchmodat":          {268, 53},
	"fchmodat2":         {452, 452},
	"creat":             {85, absent},
	"open":              {2, absent},
	"openat":            {257, 56},
	"openat2":           {437, 437},
	"mknod":             {133, absent},
	"mknodat":           {259, 33},
	// the observer's (observe_linux.go)
	"mkdir":         {83, absent},
	"mkdirat":       {258, 34},
	"unlink":        {87, absent},
	"unlinkat":      {263, 35},
	"rmdir":         {84, absent},
	"rename":        {82, absent},
	"renameat":      {264, 38},
	"renameat2":     {316, 276},
	"link":          {86, absent},
	"linkat":        {265, 37},
	"symlink":       {88, absent},
	"symlinkat":     {266, 36},
	"truncate":      {76, 45},
	"chown":         {92, absent},
	"lchown":        {94, absent},
	"fchownat":      {260, 54},
	"utime":         {132, absent},
	"utimes":        {235, absent},
	"futimesat":     {261, absent},
	"utimensat":     {280, 88},
	"setxattr":      {188, 5},
	"lsetxattr":     {189, 6},
	"removexattr":   {197, 14},
	"lremovexattr":  {198, 15},
	"setxattrat":    {463, 463},
	"removexattrat": {466, 466},
	// the Landlock backend's read-only supervisor's (rofs_linux.go)
	"fchown":       {93, 55},
	"fsetxattr":    {190, 7},
	"fremovexattr": {199, 16},
	"access":       {21, absent},
	"faccessat":    {269, 48},
	"faccessat2":   {439, 439},
	// inode flags by path (Linux 6.17), refused by the Landlock backend
	"file_setattr": {469, 469},
}
