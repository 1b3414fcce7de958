package settingsfile

// The decider's settings file: the network block of srt's settings file and
// nothing else, {"network": {…}}, with the keys the decider applies. The
// other keys of srt's network block are refused, each with what to do
// instead, so that a block copied from srt's file cannot silently lose a
// rule the decider does not apply.

// notTheDecider starts the refusal of a key of srt's network block that the
// decider does not apply.
const notTheDecider = "is not a setting of the decider: "

// removeIt ends it.
const removeIt = "; remove it from the decider's settings"

// NotTheDeciders are the keys of srt's network block that the decider does
// not apply, each with why (and where it belongs instead).
var NotTheDeciders = map[string]string{
	"allowUnixSockets":        "it is for srt's sandbox, which the decider has none of",
	"allowAllUnixSockets":     "it is for srt's sandbox, which the decider has none of",
	"allowLocalBinding":       "it is for srt's sandbox, which the decider has none of",
	"allowMachLookup":         "it is for srt's sandbox, which the decider has none of",
	"httpProxyPort":           "it sends a sandbox's proxy connections to an external proxy, and srt-proxy run alone has no sandbox",
	"socksProxyPort":          "it sends a sandbox's proxy connections to an external proxy, and srt-proxy run alone has no sandbox",
	"parentProxy":             "srt-proxy run alone connects to every destination itself, through no parent proxy",
	"mitmProxy":               "it routes srt's own proxy through another proxy, which srt-proxy run alone does not do",
	"filterRequest":           "it is a callback of srt's Go library, which a settings file cannot give",
	"allowPlaintextHeaderSet": "srt-proxy run alone takes it as its option --plaintext-header-set",
	"stripResponseHeaders":    "srt-proxy run alone takes it as its option --strip-response-header",
	"refuseOpaqueTunnels":     "srt-proxy run alone always refuses the tunnels it cannot inspect",
	"requireHostMatch":        "srt-proxy run alone always requires the Host header and the TLS server name to name the destination",
	"ambiguousRequestTarget":  "srt-proxy run alone always sends a request-target as it is spelled",
	"tlsTerminate":            "srt-proxy run alone terminates TLS with the CA it reads from its option --ca-fd",
	"exposeLoopbackPorts":     "it is for srt's sandbox, which the decider has none of",
}

// onlyNetwork is the refusal of a top-level key other than "network".
const onlyNetwork = `is not a setting of the decider, whose settings hold the "network" block alone (srt's other settings are for its sandbox)` + removeIt

// ParseDecider validates the decider's settings document and returns its
// network block. It returns a *SyntaxError, or an *InvalidError listing
// every problem found, each with the dotted path of the key at fault.
func ParseDecider(data []byte) (*Network, error) {
	root, err := Parse(data)
	if err != nil {
		return nil, err
	}
	c := &Checker{}
	n := &Network{}
	if c.TypeIs(nil, root, Object) {
		for _, m := range root.Obj {
			if m.Key == "network" {
				continue
			}
			msg := onlyNetwork
			if closest(m.Key, []string{"network"}) != "" {
				msg += `; did you mean "network"?`
			}
			c.Add(Path{m.Key}, "%s", msg)
		}
		var refused []Field
		for key, why := range NotTheDeciders {
			refused = append(refused, Field{Name: key, Check: func(p Path, v *Value) {
				c.Add(p, "%s", notTheDecider+why+removeIt)
			}})
		}
		c.NetworkObject(Path{"network"}, root.Get("network"), n, refused)
	}
	if len(c.Issues) > 0 {
		return nil, &InvalidError{Issues: c.Issues}
	}
	return n, nil
}
