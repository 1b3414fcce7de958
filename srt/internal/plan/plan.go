package plan

import (
	"github.com/srt-sandbox/srt/internal/fsview"
	"github.com/srt-sandbox/srt/internal/glob"
	"github.com/srt-sandbox/srt/internal/initstage"
	"github.com/srt-sandbox/srt/settings"
)

// Input is everything Build needs.
type Input struct {
	Config *settings.Config
	FS     fsview.FS
	Cwd    string // absolute, clean
	Home   string // absolute, clean
	UID    int    // the user srt runs as
	// TmpDir is the sandbox's private TMPDIR, a path inside the sandbox on
	// an in-memory filesystem that exists only while the sandbox does
	// (PrivateTmp). Empty: TMPDIR is left as it is.
	TmpDir string
	// TmpdirBytes, when positive, is the size of the in-memory filesystem
	// mounted at PrivateTmp (limits.tmpdirMiB, or its default): the rest
	// of bubblewrap's /dev is then read-only, so that nothing in memory
	// the sandbox writes is unbounded. 0 keeps PrivateTmp a directory of
	// /dev.
	TmpdirBytes int64
	// Env is the environment the command would inherit, KEY=value.
	Env []string
	// Command is the shell, its flags and the command string.
	Command []string
	// Proxy, when set, is the network the sandbox reaches through srt's
	// proxies: their variables are set.
	Proxy *Proxy
	// Network, when set, is the network namespace srt prepared for the
	// sandbox (srt/internal/netns): bubblewrap joins it instead of making
	// one. Without it bubblewrap makes an empty one (--unshare-net).
	Network *Network
	// Helpers are executables bound read-only at their own path inside
	// the sandbox, whatever the rules hide (the ssh ProxyCommand).
	Helpers []string
	// TrustBundle, when set, is the host file of TLS termination's trust
	// bundle (network.tlsTerminate): bound read-only at TrustBundlePath
	// whatever the rules hide, and named by every variable of TrustVars.
	TrustBundle string
	// CAKey and CACert are tlsTerminate's caKeyPath and caCertPath,
	// absolute, when the settings give a CA. The key is never readable
	// inside, whatever the settings say (filesystem.disabled included):
	// with it the command could mint certificates its own clients trust.
	// The certificate stays readable under a covering denyRead (the
	// reference adds it to allowRead).
	CAKey, CACert string
	// StateDir is srt's own state directory (placeholders' journals and
	// lock, run directories): read-only in every sandbox, whatever the
	// settings say.
	StateDir string
	// SettingsFiles are the files srt reads its settings from (absolute):
	// write-protected in every sandbox, and kept from being created where
	// they do not exist, whatever the settings say. A command that could
	// change them would choose the rules of every later run.
	SettingsFiles []string
	// Limits are srt's bounds on the plan; srt itself leaves them zero.
	Limits Limits
	// MaskedFiles are the files of credentials.files entries in mode
	// "mask" that srt masked, absolute, their symlinks resolved: each
	// shows the masked copy srt made (Plan.MaskedFiles), read-only, in
	// place of the real file.
	MaskedFiles []string
	// BoundAs, when set, returns the address a Unix socket of the host
	// whose file is id was bound to (the path given to bind), and whether
	// there is one: a network.allowUnixSockets entry srt pins must be the
	// socket its daemon bound there, not one a sandbox moved there in an
	// earlier run.
	BoundAs func(id FileID) (name string, found bool, err error)
}

// Limits bound the work of a plan. A zero field is srt's own limit; tests
// set small ones. A smaller limit only makes srt hide more, never less
// (see overflow.go).
type Limits struct {
	// Mounts is how many mounts a plan may make (MaxMounts).
	Mounts int
	// Entries is how many entries one deny pattern's expansion may visit
	// (glob.DefaultMaxEntries).
	Entries int
}

func (l Limits) orDefaults() Limits {
	if l.Mounts <= 0 {
		l.Mounts = MaxMounts
	}
	if l.Entries <= 0 {
		l.Entries = glob.DefaultMaxEntries
	}
	return l
}

// Network is the namespace srt prepared.
type Network struct {
	// ResolvConf, when set, is the sandbox's resolv.conf (naming
	// srt-proxy's resolver, netns.DNS): /etc/resolv.conf (the file it
	// leads to when it is a symlink) shows it instead of the host's,
	// unless it holds exactly that already (a sandbox inside a sandbox:
	// the outer one's file is a mount of a deleted file, on which nothing
	// can be mounted).
	ResolvConf string
	// Capture: the command waits for the capture rules (the init stage
	// starts it once srt says they are in place, or failed).
	Capture bool
}

// TrustBundlePath is where the trust bundle is inside every sandbox: a
// fixed path in bubblewrap's in-memory /dev, so the variables read the
// same in every run and no directory of the host's has to show.
const TrustBundlePath = "/dev/srt/trust-bundle.crt"

// TrustVars are the variables that point the sandbox's clients at the
// trust bundle: the reference's eleven (§5.2), then those of the package
// managers that read a CA file of their own configuration before the
// variables above, which each of these overrides. SSL_CERT_DIR is left
// alone, as the reference does. docs/tls-termination.md lists them.
var TrustVars = []string{
	"NODE_EXTRA_CA_CERTS",                // Node (added to its roots)
	"SSL_CERT_FILE",                      // OpenSSL (Python's ssl, git, Ruby, PHP, .NET, …), Go, uv, rustls-native-certs
	"CURL_CA_BUNDLE",                     // curl
	"REQUESTS_CA_BUNDLE",                 // Python requests (poetry, conda, …)
	"PIP_CERT",                           // pip, over pip.conf's cert
	"GIT_SSL_CAINFO",                     // git, over http.sslCAInfo
	"AWS_CA_BUNDLE",                      // the AWS CLI and SDKs
	"CARGO_HTTP_CAINFO",                  // cargo, over http.cainfo
	"DENO_CERT",                          // Deno
	"CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE", // gcloud
	"NIX_SSL_CERT_FILE",                  // Nix
	// npm, pnpm and yarn 1: with a cafile in .npmrc (common in
	// companies) npm ignores NODE_EXTRA_CA_CERTS and refuses every
	// minted certificate; the variable wins over the file (issue 14).
	"npm_config_cafile",
	"YARN_HTTPS_CA_FILE_PATH", // yarn 2 and later (httpsCaFilePath)
	"BUNDLE_SSL_CA_CERT",      // Ruby's bundler (ssl_ca_cert)
	"HEX_CACERTS_PATH",        // Elixir's hex
	"CONDA_SSL_VERIFY",        // conda (ssl_verify, a CA file or a boolean)
}

// PrivateTmp is the sandbox's TMPDIR: an in-memory filesystem of its own
// (of Input.TmpdirBytes) on the /dev that bubblewrap builds for every
// sandbox. It is private to the sandbox, writable, and gone with it:
// nothing is created on the host, nothing is left behind.
const PrivateTmp = "/dev/shm"

// View is what a path shows inside the sandbox.
type View int

// The views, from most to least open.
const (
	HostRW   View = iota // the host's file, writable
	HostRO               // the host's file, read-only
	Empty                // an empty tmpfs directory
	NullFile             // /dev/null on a nodev mount: every open fails with EACCES
)

func (v View) String() string { return [...]string{"host-rw", "host-ro", "empty", "null"}[v] }

// Mount is one filesystem operation of the plan, applied in order.
type Mount struct {
	Path string
	View View
	// Why names the rules that produced the mount, for debug output.
	Why string
	// Grant marks a mount that opens host content: every HostRW mount, and
	// a HostRO one that shows host content inside a hidden region (an
	// allowRead). A concurrent sandbox could swap the path for a symlink
	// between Build and the mount (issue 10, item 7), so the executor binds
	// a grant by a descriptor it opened without following symlinks and
	// checked against ID: what is bound is what Build looked at.
	// Restrictions (read-only protections, pins, denies) need no check.
	Grant bool
	ID    FileID
	// Created marks a grant on a placeholder (Plan.Placeholders), which
	// does not exist when Build runs: its ID is zero, and the executor
	// fills it in from the placeholder srt made (SetID).
	Created bool
}

// SetID records the identity of the placeholder at path, once srt has
// made it, on the grant that binds it (Mount.Created).
func (p *Plan) SetID(path string, id FileID) {
	for i := range p.Mounts {
		if m := &p.Mounts[i]; m.Path == path && m.Created {
			m.ID = id
			if m.View == HostRW {
				p.Init.Writable = append(p.Init.Writable, id)
			}
		}
	}
}

// FileID identifies a file: its device and inode numbers.
type FileID = initstage.FileID

// Placeholder is a path srt creates on the host before the run, so that a
// write-protected path that does not exist has something to mount on.
type Placeholder struct {
	Path string
	Dir  bool
	// Content is what a file placeholder holds (most are empty): for a
	// file that host programs read while it exists (.git/commondir), the
	// content that means what its absence meant.
	Content string
	// Existing: the path existed when the plan was made. srt asks for
	// it anyway: if it is another live run's placeholder, the two runs
	// share it; if it has gone since, srt makes it again; a file of the
	// user's is left alone.
	Existing bool
}

// EnvOp sets (Unset false) or removes a variable inside the sandbox.
type EnvOp struct {
	Name, Value string
	Unset       bool
}

// Plan is the result of Build.
type Plan struct {
	// Root is the view of "/" (HostRO, or HostRW with filesystem.disabled
	// or allowWrite "/").
	Root         View
	Mounts       []Mount
	Placeholders []Placeholder
	// ProtectedLinks are the symlinks on the way to a protected path
	// that lie in a writable directory (a dotfiles-managed .bashrc, a
	// .claude linked elsewhere). No mount can cover them (bubblewrap
	// protects what they point to only); the Landlock backend refuses
	// to remove or replace the links themselves.
	ProtectedLinks []string
	Env            []EnvOp
	// WriteRoots are the directories and files that are writable inside:
	// the second write barrier (Landlock) allows writes beneath these only.
	WriteRoots []string
	// ReadsDenied says whether the settings hide a path from reads
	// (denyRead, credentials.files, tlsTerminate's CA key). Only then does
	// the filesystem observer watch reads: the kernel's covers and the
	// mandatory placeholders read as empty files, which is no refusal, and
	// a notified open costs more than the open itself (docs/benchmarks.md).
	ReadsDenied bool
	// Warnings are printed on every run: each says what a setting could
	// not do.
	Warnings []string
	// Notes are debug lines.
	Notes []string
	// ProcBind mounts the host's /proc instead of a fresh one
	// (enableWeakerNestedSandbox).
	ProcBind bool
	// Kernel are the covers of the kernel's own files, applied right after
	// /proc is mounted: /sys read-only where the root is writable, and
	// /proc's global entries read-only (HostRO) or masked (NullFile). See
	// kernel.go.
	Kernel []Mount
	// ProcReadOnly makes /proc read-only as a whole, after Kernel (every
	// mode but a user's allowNestedUserNamespaces: kernel.go).
	ProcReadOnly bool
	// Helpers are bound read-only at their own path after every other
	// mount, so that the rules cannot hide them.
	Helpers []string
	// TrustBundle is the host file bound read-only at TrustBundlePath
	// after every other mount; "" when there is none.
	TrustBundle string
	// SharedNet: bubblewrap joins the network namespace srt made
	// (Input.Network) instead of making one.
	SharedNet bool
	// ResolvConf is where the sandbox's resolv.conf is bound (after every
	// other mount), from descriptor ResolvFD, which the caller sets: the
	// host's /etc/resolv.conf, or the file its symlinks lead to. "" when
	// the sandbox keeps the host's.
	ResolvConf string
	ResolvFD   int
	// MaskedFiles are bound last, each from its descriptor (which the
	// caller sets) over the real file: the masked copies of
	// credentials.files (Input.MaskedFiles) that the rules leave readable.
	MaskedFiles []MaskedFile
	// TmpdirBytes is Input.TmpdirBytes.
	TmpdirBytes int64
	// Init is what the init stage applies before it starts Command.
	Init    initstage.Spec
	Command []string
	// rootWhy names the rule that makes "/" writable, for Writable.
	rootWhy string
	// secret is the per-run proxy password the environment carries, which
	// String masks: the plan is printed in debug output.
	secret string
}

// MaskedFile is a masked copy of a credentials file, bound read-only from
// descriptor FD (an anonymous memory file: nothing on disk) over Path.
type MaskedFile struct {
	Path string
	FD   int
}
