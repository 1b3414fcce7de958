// Command srt-proxy is srt's egress proxy: HTTP (absolute-form and
// CONNECT) and SOCKS5 on the listening sockets it is handed, every
// decision asked of a decider process over the decider protocol
// (docs/decider-protocol.md). srt starts it in srt's mode; see
// docs/cli.md for running it alone.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args))
}
