// Command fakedecider stands in for srt's reference decider in the
// black-box tests and misbehaves as FAKE_DECIDER says: "late" answers every
// request after 6 s (past the proxy's 5 s timer), "garbage" answers with a
// line that is not a message, "die" exits after the hello, "allow" allows
// everything, "setheader" allows everything and sets "x-set: 1" on every
// request (as a decider that places a credential would).
package main

import (
	"os"
	"time"

	"github.com/srt-sandbox/decider/control"
	"github.com/srt-sandbox/decider/policy"
	"github.com/srt-sandbox/decider/protocol"
)

func main() {
	mode := os.Getenv("FAKE_DECIDER")
	proxy := os.NewFile(3, "proxy")
	ctl := control.New(os.NewFile(4, "control"))
	cfg, err := ctl.Read() // the config
	if err != nil || cfg.Network == nil {
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
	// The lists srt sent, as the reference decider says them: the proxy's
	// resolved-address check takes its exemptions from them.
	hello, _ := protocol.Encode(&protocol.DeciderHello{AllowedDomains: egress(cfg.Network.AllowedDomains), DeniedDomains: egress(cfg.Network.DeniedDomains), Ext: []string{protocol.ExtSRTv1}})
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
		case "setheader":
			b, _ := protocol.Encode(&protocol.Allow{ID: req.ID, SetHeaders: protocol.Headers{{Name: "x-set", Values: []string{"1"}}}})
			w.Write(b)
		default:
			b, _ := protocol.Encode(&protocol.Allow{ID: req.ID})
			w.Write(b)
		}
	}
}

// egress keeps the entries a hello can carry.
func egress(list []string) []string {
	out := []string{}
	for _, e := range list {
		if policy.ValidEgressEntry(e) {
			out = append(out, e)
		}
	}
	return out
}
