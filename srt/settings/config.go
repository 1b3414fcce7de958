package settings

import (
	"github.com/srt-sandbox/decider/policy"
	"github.com/srt-sandbox/decider/settingsfile"
)

// Config is a validated settings file. The zero value is not meaningful; use
// Default or Parse.
type Config struct {
	Network     Network
	Filesystem  Filesystem
	Credentials Credentials

	// IgnoreViolations maps a command-text substring ("*" for every command)
	// to substrings of violation lines that are not recorded.
	IgnoreViolations map[string][]string

	EnableWeakerNestedSandbox bool
	AllowNestedUserNamespaces bool
	MandatoryDenySearchDepth  int
	BwrapPath                 string
	GitSafeDirectories        []string

	// EnvAllow, when not nil (the environment block's allow, an
	// extension), are the only variables of the caller's environment the
	// command gets: exact names, and prefixes written "PREFIX*". srt's own
	// variables are set on top. nil passes the environment through.
	EnvAllow []string

	// Limits bound what the command may consume (the limits block, an
	// extension).
	Limits Limits

	// RequireLandlock refuses to run a command without Landlock's write
	// limit (on a kernel without Landlock) instead of warning.
	RequireLandlock bool

	// Backend is the sandbox backend (srt's extension): "" or
	// BackendAuto, BackendBubblewrap or BackendLandlock. AllowWeaker
	// names what the Landlock backend may go without where the kernel
	// lacks it (WeakerNames).
	Backend     string
	AllowWeaker []string

	// MacOS are the settings only the macOS sandbox applies (Seatbelt,
	// internal/seatbelt); Linux ignores them (Ignored lists them).
	MacOS MacOS

	// Ignored lists the keys that were accepted but have no effect on Linux
	// (macOS and Windows settings, and settings of the reference's own helper
	// programs), as dotted paths, so callers can say so in debug output.
	Ignored []string
}

// MacOS are the settings of the macOS sandbox alone.
type MacOS struct {
	// AllowMachLookup are the Mach services the command may look up
	// (network.allowMachLookup): names, or prefixes written "prefix*".
	AllowMachLookup []string
	// EnableWeakerNetworkIsolation allows the trustd lookup TLS
	// verification needs; AllowAppleEvents sending Apple events (open,
	// osascript); AllowPty pseudo-terminals.
	EnableWeakerNetworkIsolation, AllowAppleEvents, AllowPty bool
}

// Network is the network section: the part the decider applies
// (allowedDomains, deniedDomains, deniedDomainReasons, strictAllowlist,
// deniedResolvedAddresses, and Lists, the lists parsed), then srt's own.
type Network struct {
	settingsfile.Network
	AllowAllUnixSockets bool
	// ExposeLoopbackPorts are ports a server inside the sandbox listens
	// on (its loopback) that srt makes reachable at the same port on the
	// host's loopback.
	ExposeLoopbackPorts []int
	// AllowLocalBinding exposes, besides those ports, every port a server
	// inside listens on (its loopback or every address) at the same port
	// on the host's loopback, as on macOS, where the sandbox shares the
	// host's.
	AllowLocalBinding bool
	// AllowUnixSockets are the Unix socket paths (and directories, every
	// socket beneath them) the command may connect and send to, as
	// written: "~/" is expanded when a sandbox is planned.
	AllowUnixSockets []string
	// HTTPProxyPort and SOCKSProxyPort, when not 0, are the ports of
	// external proxies on this host's localhost that the sandbox's HTTP
	// (3128) and SOCKS (1080) proxy ports are relayed to, byte for byte,
	// instead of srt's own proxy: they do all the filtering on that side.
	HTTPProxyPort           int
	SOCKSProxyPort          int
	MitmProxy               *MitmProxy
	ParentProxy             *ParentProxy
	AllowPlaintextHeaderSet bool
	StripResponseHeaders    []string
	RefuseOpaqueTunnels     bool
	RequireHostMatch        bool
	// AmbiguousRequestTarget is "refuse", "asSpelled" or "normalize"; ""
	// when the file does not name it: terminated tunnels then refuse
	// ambiguous targets (the reference's default) and plain-HTTP targets
	// are not checked.
	AmbiguousRequestTarget string
	TLSTerminate           *TLSTerminate
}

// MitmProxy routes matching hosts through an upstream proxy on a Unix socket.
type MitmProxy struct {
	SocketPath string
	Domains    []policy.Pattern
}

// ParentProxy is an upstream proxy for srt's own outbound connections.
type ParentProxy struct {
	HTTP, HTTPS, NoProxy string
}

// TLSTerminate configures TLS termination of CONNECT tunnels.
type TLSTerminate struct {
	CACertPath, CAKeyPath string
	ExcludeDomains        []policy.Pattern
	ExtraCACertPaths      []string
	MaxTunnels            int
	HandshakeTimeoutMs    int
}

// Filesystem is the filesystem section.
type Filesystem struct {
	Disabled       bool
	DenyRead       []PathEntry
	AllowRead      []PathEntry
	AllowWrite     []PathEntry
	DenyWrite      []PathEntry
	AllowGitConfig bool
}

// PathEntry is one entry of a filesystem list: a path, a pattern, or (with
// Literal) a path that is never read as a pattern.
type PathEntry struct {
	Path    string
	Literal bool
}

// Credentials is the credentials section.
type Credentials struct {
	// Present is true when the file has a credentials object at all.
	Present              bool
	Files                []CredentialFile
	EnvVars              []CredentialEnv
	AllowPlaintextInject bool
	AWSPairs             []AWSPair
	SigV4                *SigV4
}

// CredentialEnv is one credentials.envVars entry.
type CredentialEnv struct {
	Name             string
	Mode             string // "deny" or "mask"
	Extract          string
	OnExtractNoMatch string
	Decode           string
	MaskClaims       []string
	InjectHosts      []policy.Pattern
}

// CredentialFile is one credentials.files entry.
type CredentialFile struct {
	Path             string
	Mode             string
	Extract          string
	OnExtractNoMatch string
	Decode           string
	MaskClaims       []string
	MaskDuplicates   bool
	InjectHosts      []policy.Pattern
}

// AWSPair names the variables of one AWS key pair.
type AWSPair struct {
	AccessKeyIDVar, SecretAccessKeyVar, SessionTokenVar string
}

// SigV4 says what to do with AWS requests srt cannot re-sign.
type SigV4 struct {
	Streaming, Presigned, SigV4A string
}

// DefaultMandatoryDenySearchDepth is how deep below the working directory
// srt looks for files it always protects from writes.
const DefaultMandatoryDenySearchDepth = 3

// Default is the configuration used when the default settings file does not
// exist: no network, no writes outside the default write paths, reads
// unrestricted.
func Default() *Config {
	lists, _ := policy.ParseLists(nil, nil, nil, false)
	return &Config{
		Network:                  Network{Network: settingsfile.Network{Lists: lists}},
		MandatoryDenySearchDepth: DefaultMandatoryDenySearchDepth,
	}
}
