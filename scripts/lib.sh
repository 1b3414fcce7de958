# Shared by the scripts in this directory: find Go, set the build flags every
# build of srt uses, install Debian packages when missing.

# The repository root.
SRT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Go: on PATH, or where the Go installer puts it.
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
	export PATH=/usr/local/go/bin:$PATH
fi
if ! command -v go >/dev/null 2>&1; then
	echo "srt: Go is needed to build srt (https://go.dev/dl/, 1.26 or later)" >&2
	exit 1
fi

# Static binaries: Landlock must restrict every thread (impossible with cgo),
# and a static binary starts faster. urfave_cli_no_docs leaves out the
# man-page generator, whose package set-up every start would pay for.
export CGO_ENABLED=0
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-tags=urfave_cli_no_docs"

# need_packages installs the Debian packages (by name) whose command (the
# name before ":") is missing. Usage: need_packages bwrap:bubblewrap curl:curl
need_packages() {
	local missing=() pair cmd pkg
	for pair in "$@"; do
		cmd=${pair%%:*} pkg=${pair#*:}
		command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || missing+=("$pkg")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
		echo "srt: please install: ${missing[*]}" >&2
		return 1
	fi
	echo "srt: installing ${missing[*]}" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 ||
		{ apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null; }
}

# build puts srt's binaries in $1.
build() {
	mkdir -p "$1"
	(cd "$SRT_ROOT" && go build -trimpath -o "$1/" ./srt/cmd/srt ./srt/cmd/srt-init ./decider/cmd/decider ./srt-proxy/cmd/srt-proxy)
}
