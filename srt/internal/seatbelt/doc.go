// Package seatbelt generates the macOS sandbox of a command: a Seatbelt
// (SBPL) profile, the sandbox-exec argument vector that applies it, and the
// command's environment. It is pure Go and builds and is tested on every
// platform; only running sandbox-exec and reading `log stream` (run_darwin.go)
// is macOS-only.
//
// # From a settings file to a profile
//
// The profile comes from the same resolved rules as the Linux plan: the
// filesystem lists as internal/plan spells them (plan.Resolve: "~" and
// relative entries resolved against home and the working directory,
// patterns told from paths by internal/glob), the always-protected names
// (plan.Resolved.HomeStartup, CwdStartup) and the environment (plan's proxy
// variables, credentials.envVars denies, git.safeDirectories, TMPDIR).
// Nothing here reads the settings a second time.
//
//	cfg, _, err := settings.Load(path, true) // or settings.Parse(data)
//	in, err := seatbelt.FromSettings(cfg, seatbelt.Env{
//		Command: "echo hi",                 // run as Shell -c Command
//		Cwd:     "/Users/u/proj",           // absolute
//		Home:    "/Users/u",                // absolute
//		Environ: os.Environ(),              // what the command would inherit
//		HTTPPort: 3128, SOCKSPort: 1080,    // srt's proxies on localhost (0: no network)
//		ProxyUser: srtlink.UserFor("echo hi"), ProxyToken: token,
//		Nonce:   "fixed",                   // the log tag's random part ("" = random)
//	})
//	prof, err := seatbelt.Generate(in)
//	// prof.SBPL: the profile; prof.Argv: sandbox-exec -p <profile> <shell> -c <command>;
//	// prof.Env: the command's whole environment (KEY=value);
//	// prof.ShellCommand(): the reference's shape, env -u … K=V … sandbox-exec -p '…' shell -c '…'.
//
// Inputs can also be built by hand (tests): every path in it is absolute
// and clean, every pattern is internal/glob's.
//
// # What the profile says
//
// Deny by default, every denial logged with the command's tag
// (LogTag: CMD64_<base64 of the attribution key>_END__<nonce>_SBX, the
// reference's shape, which the log stream monitor filters on). Reads are
// allowed but for denyRead (and credentials.files denies and masked files,
// which macOS cannot show masked: they degrade to denies), re-opened by
// allowRead where the allow is deeper than the deny, as on Linux; patterns
// become regexes, so files created later are covered too. Writes are
// allowed only beneath allowWrite and the default write paths, and never
// to denyWrite, the always-protected names (in the working directory and
// at any depth beneath it, and in home; in any letter case, as macOS's
// case-insensitive volumes read them) or srt's settings files; renaming
// a protected path or a directory above it is denied, so the protection
// cannot be moved away. The network reaches only the proxies' localhost
// ports; allowLocalBinding opens localhost for listening and connecting,
// allowUnixSockets the listed socket paths (and everything beneath a
// listed directory), allowAllUnixSockets every Unix socket.
//
// # Strings
//
// Every settings value that reaches the profile is written as an SBPL
// string literal by sbplString: '"' and '\' are escaped, and a value with
// a control character or invalid UTF-8 is refused with an error naming the
// setting. No value can end a string or add a rule (FuzzProfileStructure).
package seatbelt
