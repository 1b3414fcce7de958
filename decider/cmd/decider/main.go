// Command decider is srt's reference decider: it answers srt-proxy's
// questions with the settings' network rules (decider/engine) over the
// decider protocol (docs/decider-protocol.md). srt starts it, joined to
// srt-proxy by a socket pair and to srt itself by the control channel
// (decider/control).
//
//	decider --proxy-fd N --control-fd M [--framing line|length] [-d]
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

func main() {
	proxyFD := flag.Int("proxy-fd", -1, "descriptor of the stream to srt-proxy")
	controlFD := flag.Int("control-fd", -1, "descriptor of the control channel to srt")
	framing := flag.String("framing", "line", "decider protocol framing: line or length")
	debug := flag.Bool("d", false, "print one line per decision on stderr")
	flag.Parse()
	if *proxyFD < 0 || *controlFD < 0 {
		fmt.Fprintln(os.Stderr, "decider: --proxy-fd and --control-fd are required")
		os.Exit(2)
	}
	d, err := newDecider(*proxyFD, *controlFD, *framing, *debug)
	if err != nil {
		fmt.Fprintf(os.Stderr, "decider: %v\n", err)
		os.Exit(2)
	}
	if err := d.run(); err != nil {
		if errors.Is(err, errSRTGone) {
			return // srt closing its end is how it says stop
		}
		if errors.Is(err, errNoHello) {
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "decider: stopped (%v)\n", err)
		os.Exit(1)
	}
}
