// Command fakedecider stands in for srt's reference decider in the
// black-box tests and misbehaves as FAKE_DECIDER says: "late" answers every
// request after 6 s (past the proxy's 5 s timer), "garbage" answers with a
// line that is not a message, "die" exits after the hello, "allow" allows
// everything.
package main

import (
	"os"
	"time"

	"github.com/srt-sandbox/decider/control"
	"github.com/srt-sandbox/decider/protocol"
)

func main() {
	mode := os.Getenv("FAKE_DECIDER")
	proxy := os.NewFile(3, "proxy")
	ctl := control.New(os.NewFile(4, "control"))
	if _, err := ctl.Read(); err != nil { // the config
		os.Exit(1)
	}
	go func() { // srt's end closing is the signal to stop
		for {
			if _, err := ctl.Read(); err != nil {
				os.Exit(0)
			}
		}
	}()
	r := protocol.NewReader(proxy, protocol.Line, protocol.MaxProxyFrame)
	w := protocol.NewWriter(proxy, protocol.Line)
	if _, err := r.Read(); err != nil {
		os.Exit(1)
	}
	hello, _ := protocol.Encode(&protocol.DeciderHello{AllowedDomains: []string{}, DeniedDomains: []string{}, Ext: []string{protocol.ExtSRTv1}})
	w.Write(hello)
	if mode == "die" {
		os.Exit(0)
	}
	for {
		frame, err := r.Read()
		if err != nil {
			os.Exit(0)
		}
		m, err := protocol.DecodeProxyMessage(frame, true)
		if err != nil {
			os.Exit(1)
		}
		req, ok := m.(*protocol.Req)
		if !ok {
			continue
		}
		switch mode {
		case "late":
			go func(id uint64) {
				time.Sleep(6 * time.Second)
				b, _ := protocol.Encode(&protocol.Allow{ID: id})
				w.Write(b)
			}(req.ID)
		case "garbage":
			proxy.Write([]byte("{not a message\n"))
		default:
			b, _ := protocol.Encode(&protocol.Allow{ID: req.ID})
			w.Write(b)
		}
	}
}
