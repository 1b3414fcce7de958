// Package backendtest is the table of which probes each sandbox backend
// stops, for the tests: the probes the Landlock backend does not stop or
// cannot run, and why. The tests it names skip under the Landlock backend
// (SRT_TEST_BACKEND=landlock, which scripts/test sets for a second run of
// the e2e and library suites) with the table's reason; docs/security.md
// shows the table (Table), and the e2e test TestBackendTableInDocs checks
// that it is the same.
package backendtest

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Backend is the backend the tests run srt with: SRT_TEST_BACKEND
// ("landlock", "bubblewrap"; unset: srt's own choice).
var Backend = os.Getenv("SRT_TEST_BACKEND")

// Landlock says whether the tests run under the Landlock backend.
var Landlock = Backend == "landlock"

// A Probe is a line of the table of which probes each backend
// stops (docs/security.md, "Which probes each backend stops"): the probes
// the Landlock backend does not stop, those it cannot run, and why. A
// test named in a row with a Skip reason is skipped under the Landlock
// backend (Skip), saying so by name; every other test of the
// suite runs there as under bubblewrap, with each backend's errnos.
type Probe struct {
	Probe      string   // what the probes try
	Tests      []string // the tests that run them: "Test", "Test/runner" (a subtest), or "Test/part" (skipPart)
	Bubblewrap string   // the outcome under bubblewrap
	Landlock   string   // the outcome under the Landlock backend
	Skip       string   // why the Landlock run skips the tests; "" runs them
}

// Probes is the table.
var Probes = []Probe{
	// Same protection, other errno (refused): the tests run.
	{"writes outside `allowWrite`, through `/proc/self/fd`, symlinks and `..`, races on grants", []string{"TestEscapeWriteReadOnly", "TestWriteThroughSymlinkLeadingOut", "TestEscapeAllowWriteThroughSymlink", "TestTrustedSymlinkCarriesAGrant", "TestEscapeDotDotAfterWildcard", "TestEscapeRaceSwapGrant"}, "stopped (`EROFS`)", "stopped (`EROFS`, the init stage's read-only supervisor; Landlock refuses what it lets run)", ""},
	{"`denyRead`, through symlinks, hard links, `/proc/<pid>/root` and inherited descriptors", []string{"TestEscapeReadDenied", "TestEscapeDenyPatternThroughSymlink", "TestEscapeInheritedDescriptors", "TestDeniedDirectoryIsEmpty", "TestAllowReadReopensAndSpecificDenyHolds", "TestBracketedDirectoryInAPattern"}, "stopped (`EACCES`; `ENOENT` in a denied directory, an empty tmpfs; `EXDEV` for a link)", "stopped (`EACCES`; a denied directory can be neither listed nor written; `EXDEV` for a link)", ""},
	{"git hooks and config, `.claude`, start-up files, settings files, the state directory", []string{"TestEscapeHooksPath", "TestEscapeClaudeDir", "TestReviewEscapeHooksPath", "TestReviewEscapeHomeStartupFiles", "TestReviewEscapeSettingsFile", "TestReviewEscapeClaudeSettingsLocal", "TestReviewEscapeNpmLogsSymlink", "TestEscapeStateDirJournal", "TestEscapeStateDirLock", "TestEscapeFSViolationsHostile"}, "stopped (`EROFS`)", "stopped (`EROFS`)", ""},
	{"a protected name that is a symlink, removed or replaced from inside", []string{"TestLimitSymlinkedProtectedName", "TestReview2HoldsSettingsThroughLinkedDir", "TestEscapeAvailabilityProtectedLink"}, "**not stopped**: a mount cannot be placed on a symlink (srt warns)", "stopped (`EROFS`): the link's directory takes no change of a protected name", ""},
	{"a protected file handed as stdin or stdout, opened again through `/proc/self/fd`", []string{"TestReview3EscapeStdinReopen", "TestStdioFilesReopen"}, "stopped: srt refuses the descriptor (the reopen would lead past the mount)", "stopped: handed over, and Landlock refuses the reopen (`EACCES`)", ""},
	{"kernel files under `/proc` and `/sys` opened for writing", []string{"TestEscapeKernelFilesWalk", "TestEscapeCorePattern"}, "stopped (`EROFS`)", "stopped (`EROFS`; a user's `EACCES` where the file's permissions refuse first, as under bubblewrap)", ""},
	{"TCP to an allowed port on another address (127.0.0.2, IPv4-mapped, a rewritten address), TCP Fast Open, `listen` without a bound port, a socket swapped onto the number", []string{"TestLandlockNetConnectAddress", "TestLandlockNetFastOpen", "TestLandlockNetListen", "TestReviewLLRONetlinkSwap", "TestReviewLLROUnixSwapDefault", "TestReviewLLROOwnFilterSwap"}, "stopped (its own network namespace; the tests force the Landlock backend)", "stopped: the supervisor performs every connect and listen on the socket it took, with the address it copied (`EACCES`); Fast Open `EOPNOTSUPP` (seccomp)", ""},
	{"inode flags of a write-protected file (`chattr`'s ioctls, `file_setattr`)", []string{"TestReviewLLROInodeFlags", "TestReviewLLROFileSetattr"}, "stopped (`EROFS`, a read-only mount; the tests force the Landlock backend)", "stopped (`EPERM`, `ENOSYS`: seccomp refuses them wherever the file lies)", ""},
	{"Unix, vsock and io_uring sockets", []string{"TestEscapeSockets"}, "stopped (`EPERM`)", "stopped (`EPERM`; vsock refused even with `allowAllUnixSockets`)", ""},
	{"the mode, owner, times or extended attributes of a file outside the write roots or write-protected, by path, directory descriptor, `/proc/self/fd` or descriptor; a symlink raced against the check", []string{"TestEscapeMetadata", "TestEscapeMetadataRace"}, "stopped (`EROFS`)", "stopped (`EROFS`): Landlock does not cover these calls; the init stage's supervisor decides them on the inode it opened, and performs those the rules allow", ""},
	{"`chmod` of root's files in `/proc` and `/sys` as uid 0", []string{"TestEscapeProcChmod", "TestEscapeSysWritableRoot"}, "stopped (`EROFS`)", "stopped (`EROFS`, the init stage's supervisor)", ""},
	{"the controls that make a namespace of the probe's own (`allowNestedUserNamespaces`)", []string{"TestEscapeWriteReadOnly/nested", "TestEscapeKernelFilesWalk/nested"}, "run", "cannot run: seccomp refuses every namespace (`EPERM`), `allowNestedUserNamespaces` or not", "no namespace can be made inside (seccomp), so the controls that need one cannot run"},

	{"the private `TMPDIR`", []string{"TestDefaultsAllowNoWrites/tmpdir"}, "`/dev/shm`, in memory", "`tmp-*` in srt's state directory, mode 0700 (writable, gone afterwards: both checked)", "TMPDIR is a directory of srt's state directory, not /dev/shm"},
	{"uid 0 without `allowWeaker: [\"root\"]`", []string{"TestLandlockRootRefused"}, "not applicable", "refused (checked in the suite's bubblewrap run: the forced backend adds the opt-in)", "the suite's forced backend adds --allow-weaker=root, the opt-in this test checks the refusal of"},

	// Not stopped: named, and documented above.
	{"`/proc/keys` listing", []string{"TestEscapeUserKeyring"}, "stopped (masked)", "**not stopped** (key descriptions of the caller's keyrings; the keyring calls stay refused)", "the host's /proc is the command's: /proc/keys lists the caller's keys (their descriptions; keyctl stays refused)"},
	{"seeing host processes", []string{"TestEscapeHostProcesses", "TestEscapePtrace", "TestSandboxSeesItsOwnProcessesAndUID"}, "stopped (PID namespace)", "**not stopped**: visible in `/proc`; their `environ`, `cwd`, `mem` and ptrace refused", "no PID namespace: host processes are visible in /proc (ptrace and their environ stay refused)"},
	{"signalling host processes, `kill(-1)`", []string{"TestEscapeSignals"}, "stopped (PID namespace)", "stopped (`EPERM`, `TestLandlockBackendRules`); the probe, which expects `kill(-1)` to reach its own child, cannot run", "kill(-1) is refused outright (EPERM, TestLandlockBackendRules), and this probe waits for it to reach its own child"},
	{"a protected file's second hard link", []string{"TestLimitHardLinkedProtectedName", "TestHardLinkedDeniedFileWarns"}, "the other name writable (readable); the protected name refused", "**both names writable (readable)**: Landlock grants inodes, and the other name's grant covers the protected one; srt's warning says only the other name is", "Landlock grants inodes: a grant of the writable name covers the protected name too"},
	{"`bwrapPath` planted by the sandbox", []string{"TestEscapePlantedBwrap"}, "stopped", "not applicable (runs no bubblewrap)", "the backend runs no bubblewrap"},

	// Namespace-only probes.
	{"nested sandboxes, mount locks, namespaces of the command's own", []string{"TestEscapeNestedMountLocks", "TestNestedSandboxes", "TestEscapeNamespaces"}, "stopped (locked mounts)", "stopped harder: no namespace at all (seccomp `EPERM`); the controls that need one cannot run", "no namespace can be made inside (seccomp): the probes and controls of mounts in a namespace of the command's own cannot run"},
	{"the bounding set of an unprivileged user's command", []string{"TestReviewHoldsRootCapabilities/srt-test"}, "empty", "the host's (no capability is held: effective and permitted sets empty, `no_new_privs`)", "an unprivileged process cannot empty its bounding set (CAP_SETPCAP); it holds no capability and runs with no_new_privs"},
	{"transparent capture, its DNS and its ports; the sandbox's own network interfaces", []string{"TestCaptureLoopbackEntry", "TestCaptureIPv6Loopback", "TestCaptureUDP", "TestCaptureCannotBeChanged", "TestCapturePublicResolverUDP", "TestCaptureOffFindingWarnings", "TestEscapeCaptureStealPorts", "TestEscapeCaptureNamespace", "TestEscapeCaptureFirstInstruction", "TestJavaHTTPClient", "TestMaven", "TestMITMProxyClients", "TestMITMProxyFailures", "TestUnixSocketsNetworkUnderSupervision", "TestOnlyLoopbackInside"}, "stopped", "not applicable: no capture; a direct connection is refused (`EACCES`), UDP (`EPERM`)", "no network namespace, so no transparent capture: direct connections are refused instead"},
	{"placeholders shared by concurrent runs", []string{"TestEscapeConcurrentPlaceholder", "TestEscapePlaceholderTwoStateDirs"}, "stopped", "cannot run: the backend mounts no placeholder (a missing protected path is not granted)", "the backend makes no placeholders for the probes to race"},
	{"output that names bubblewrap, its layers or its fixed proxy ports (3128, 1080)", []string{"TestDebugLineFormat", "TestDebugMasksProxyPassword", "TestLayersReport", "TestLoggerIsSlog", "TestProxyVariables", "TestExternalHTTPProxy", "TestExternalSOCKSProxy", "TestExternalProxiesOnly"}, "checked", "not applicable (no bubblewrap; the proxies' ports chosen per run, on the host's loopback)", "the output these tests check is bubblewrap's: its path, its layers, its fixed proxy ports"},
	{"servers inside: ports beside `exposeLoopbackPorts`, `allowLocalBinding`, the relay of the host's ::1", []string{"TestExposeLoopbackPorts", "TestAllowLocalBinding", "TestReview12ExposeHostV6Taken"}, "any port inside the command's own namespace; the exposed ones relayed", "only `exposeLoopbackPorts` can be bound (`EACCES`), on the host's loopback itself; `allowLocalBinding` binds nothing more; nothing is relayed", "Landlock's TCP rules let the command bind only exposeLoopbackPorts, on the host's own loopback: no other server port, no relay"},
	{"`limits.tmpdirMiB`, and `limits.processes` as a user without a delegated pids cgroup", []string{"TestLimitsTmpdir", "TestLimitsForkBomb/srt-test"}, "enforced (tmpfs size; RLIMIT_NPROC counted in the user namespace)", "refused at the start, naming the limit (no mount for TMPDIR; RLIMIT_NPROC would count every process of the user on the host)", "the backend refuses these limits where it cannot enforce them (docs/settings.md, limits)"},
	{"a masked credentials file", []string{"TestMaskFile", "TestMaskExtract/file"}, "a masked copy in its place", "unreadable (`EACCES`; srt warns), even where the extract pattern matched nothing and the bubblewrap backend leaves it readable", "no mount can put a masked copy in the file's place: it is unreadable instead"},

	{"an srt inside an srt sandbox, with its own narrower rules", []string{"TestLandlockNested", "TestLandlockNestedInLandlock"}, "the inner srt runs the Landlock backend and enforces its rules beside the outer ones", "the inner srt runs the Landlock backend on the two spare listeners the outer srt offers it (`SRT_LANDLOCK_LISTENERS`: one srt inside at a time, one level deep; an srt inside that one refuses) and enforces its rules beside the outer ones", ""},

	{"host Unix sockets not in `allowUnixSockets` (pathname and abstract), once the list names any", []string{"TestUnixSocketsAllowList", "TestUnixSocketsAddressRace", "TestUnixSocketsSSHAgent", "TestReview12UnixSocketsSyscalls", "TestReview12UnixSocketsProcFdAndRename"}, "stopped (`EACCES`; an abstract name is not there, `ECONNREFUSED`)", "stopped (`EACCES`; an abstract name `EPERM`, as Landlock's scope)", ""},
	{"a Unix socket the command binds itself, with `allowUnixSockets` set", []string{"TestUnixSocketsAllowList/own sockets", "TestUnixSocketsPinned/own socket"}, "reachable", "refused (`EACCES`): without a network namespace of its own srt cannot tell it from a host daemon's", "without a network namespace srt cannot tell a socket the command bound from a host daemon's, and refuses both"},
	{"a working directory filled with 50 001 new files, then a nested repository's hook", []string{"TestEscapeScanExhausted"}, "the hook refused (`EROFS`); the scan not stopped", "the hook refused (`EROFS`); the scan not stopped; the 50 001 files are made through the chain supervisor", ""},
	{"a commit signed inside through the host's gpg-agent, its socket listed", []string{"TestUnixSocketsGPGSigning"}, "signed", "signed: gpg finds its read-only `GNUPGHOME` so (`access(W_OK)` and its lock file answered `EROFS` by the read-only supervisor) and takes no lock", ""},
}

// Skip skips the test (or the runner's subtest) under the
// Landlock backend when the table says the backend cannot stop or cannot
// run its probes, with the table's reason.
func Skip(t testing.TB) {
	t.Helper()
	name := t.Name()
	top, _, _ := strings.Cut(name, "/")
	known := false
	for _, p := range Probes {
		for _, n := range p.Tests {
			known = known || strings.HasPrefix(n, top+"/")
			if n != top && n != name {
				continue
			}
			if p.Skip == "" {
				t.Fatalf("%s calls Skip, and the table (backendtest.Probes) runs it under the Landlock backend", name)
			}
			if Landlock {
				t.Skipf("the Landlock backend: %s (docs/security.md, \"Which probes each backend stops\")", p.Skip)
			}
			return
		}
	}
	if !known {
		t.Fatalf("%s calls Skip, and the table (backendtest.Probes) does not name it", name)
	}
}

// SkipPart says whether part of a test (the row "Test/part") is skipped
// under the Landlock backend, and logs it.
func SkipPart(t testing.TB, part string) bool {
	t.Helper()
	top, _, _ := strings.Cut(t.Name(), "/")
	for _, p := range Probes {
		for _, n := range p.Tests {
			if n == top+"/"+part {
				if Landlock {
					t.Logf("skipped %s under the Landlock backend: %s", part, p.Skip)
					return true
				}
				return false
			}
		}
	}
	t.Fatalf("SkipPart(%q): the table (backendtest.Probes) has no row %s/%s", part, top, part)
	return false
}

// Table is the table as docs/security.md shows it.
func Table() string {
	var b strings.Builder
	b.WriteString("| Probe (tests) | bubblewrap | Landlock backend | the suite under the Landlock backend |\n|---|---|---|---|\n")
	for _, p := range Probes {
		run := "runs the tests"
		if p.Skip != "" {
			run = "skips them: " + p.Skip
		}
		fmt.Fprintf(&b, "| %s (`%s`) | %s | %s | %s |\n", p.Probe, strings.Join(p.Tests, "`, `"), p.Bubblewrap, p.Landlock, run)
	}
	return b.String()
}
