package settings

// The refusals of settings that only srt's own proxy applies, when
// network.httpProxyPort or socksProxyPort sends that side of the sandbox's
// traffic to an external proxy instead (the reference accepts them and
// they do nothing there).
const (
	tlsWithExternalMessage    = "cannot be used with network.httpProxyPort: the sandbox's HTTPS then goes through the external proxy on that port, which cannot terminate it with srt's CA (the CA and the trust bundle belong to srt's own proxy); remove one of the two"
	mitmWithExternalMessage   = "has no effect with both network.httpProxyPort and network.socksProxyPort: srt's own proxy does not run, so nothing goes through the MITM proxy; remove it, or have the external proxies use it"
	parentWithExternalMessage = "has no effect with both network.httpProxyPort and network.socksProxyPort: srt's own proxy does not run, so nothing goes through the parent proxy; remove it, or give the external proxies their parent"
)

// externalProxy refuses the settings that apply only in srt's own proxy
// on a side of the sandbox's proxies that an external proxy serves: they
// would silently do nothing.
func (c *checker) externalProxy(p path, v *value, n *Network) {
	if v == nil || v.Kind != kindObject {
		return
	}
	http, socks := n.HTTPProxyPort != 0, n.SOCKSProxyPort != 0
	if http {
		if v.Get("tlsTerminate") != nil {
			c.Add(p.Key("tlsTerminate"), "%s", tlsWithExternalMessage)
		}
		for _, k := range []struct {
			name string
			on   bool
		}{
			{"requireHostMatch", n.RequireHostMatch},
			// asSpelled is what an external proxy gets anyway.
			{"ambiguousRequestTarget", n.AmbiguousRequestTarget == "refuse" || n.AmbiguousRequestTarget == "normalize"},
			{"stripResponseHeaders", len(n.StripResponseHeaders) > 0},
		} {
			if k.on {
				c.Add(p.Key(k.name), "is a rule of srt's own HTTP proxy, and network.httpProxyPort sends the sandbox's HTTP proxy connections to an external proxy instead, so it would have no effect; remove one of the two, and have the external proxy apply it")
			}
		}
	}
	if n.RefuseOpaqueTunnels && (http || socks) {
		key := "httpProxyPort"
		if !http {
			key = "socksProxyPort"
		}
		c.Add(p.Key("refuseOpaqueTunnels"), "cannot hold with network.%s: the tunnels the sandbox opens through the external proxy on that port never reach srt's own proxy; remove one of the two, and have the external proxy refuse them", key)
	}
	if http && socks && v.Get("parentProxy") != nil {
		c.Add(p.Key("parentProxy"), "%s", parentWithExternalMessage)
	}
	if http && socks && v.Get("mitmProxy") != nil {
		c.Add(p.Key("mitmProxy"), "%s", mitmWithExternalMessage)
	}
}
