// Command srt-proxy is srt's egress proxy: HTTP (absolute-form and
// CONNECT) and SOCKS5 on the listening sockets it is handed, every
// decision asked of a decider process over the decider protocol
// (docs/decider-protocol.md). srt starts it in srt's mode (--srt-mode);
// without that flag it is the reference's `srt proxy`, a standalone egress
// gate (proxy-only mode, docs/srt-proxy.md).
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args))
}
