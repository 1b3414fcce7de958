package plan

import (
	"strconv"
	"strings"
)

// Proxy describes the proxies inside the sandbox, for the environment the
// command gets (the reference's variables, §4.5 of the behaviour notes).
type Proxy struct {
	HTTPPort, SOCKSPort int
	// User and Token are the credentials of srt's own proxy; with no Token
	// URLs carry no userinfo.
	User, Token string
	// HTTPExternal and SOCKSExternal say that the port is relayed to an
	// external proxy (network.httpProxyPort, socksProxyPort): srt's
	// credentials are not for it, so its URLs and variables carry none.
	HTTPExternal, SOCKSExternal bool
	// Connect is the argv prefix of the ssh ProxyCommand srt provides
	// inside; ssh appends the host and port. It authenticates as
	// HTTPS_PROXY's userinfo says, so through an external HTTP proxy
	// without credentials.
	Connect []string
}

// noProxy: clients connect to these directly. Inside the sandbox's network
// namespace that fails, which is the point: only the proxies lead out.
const noProxy = "localhost,127.0.0.1,::1,169.254.0.0/16,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16"

// proxyEnv sets the proxy variables.
func (b *builder) proxyEnv(set func(k, v string)) {
	p := b.in.Proxy
	if p == nil {
		return
	}
	// srt's credentials go only to srt's own proxy: an external one would
	// be handed a secret that is not its own.
	httpAuth, socksAuth := p.Token != "" && !p.HTTPExternal, p.Token != "" && !p.SOCKSExternal
	if httpAuth || socksAuth {
		b.p.secret = p.Token
	}
	userinfo := func(auth bool) string {
		if !auth {
			return ""
		}
		return escapeUser(p.User) + ":" + p.Token + "@"
	}
	httpURL := "http://" + userinfo(httpAuth) + "localhost:" + strconv.Itoa(p.HTTPPort)
	socksURL := "socks5h://" + userinfo(socksAuth) + "localhost:" + strconv.Itoa(p.SOCKSPort)
	set("NO_PROXY", noProxy)
	set("no_proxy", noProxy)
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy", "GRPC_PROXY", "grpc_proxy", "DOCKER_HTTP_PROXY", "DOCKER_HTTPS_PROXY"} {
		set(k, httpURL)
	}
	if httpAuth {
		// curl and git send credentials only after a 407 unless told to.
		set("GIT_CONFIG_PARAMETERS", "'http.proxyAuthMethod=basic'")
	}
	set("FTP_PROXY", socksURL)
	set("ftp_proxy", socksURL)
	set("RSYNC_PROXY", "localhost:"+strconv.Itoa(p.SOCKSPort))
	set("CLOUDSDK_PROXY_TYPE", "http")
	set("CLOUDSDK_PROXY_ADDRESS", "localhost")
	set("CLOUDSDK_PROXY_PORT", strconv.Itoa(p.HTTPPort))
	if httpAuth {
		set("CLOUDSDK_PROXY_USERNAME", p.User)
		set("CLOUDSDK_PROXY_PASSWORD", p.Token)
	}
	if len(p.Connect) > 0 {
		set("GIT_SSH_COMMAND", "ssh -o ControlMaster=no -o ControlPath=none -o ProxyCommand="+shellWord(strings.Join(p.Connect, " ")+" %h %p"))
	}
}

// escapeUser percent-encodes a proxy username for a URL's userinfo. The
// username is "srt" or "srt." and base64, so only these three need it.
func escapeUser(u string) string {
	return strings.NewReplacer("+", "%2B", "/", "%2F", "=", "%3D").Replace(u)
}

// shellWord single-quotes s for a shell (ssh runs ProxyCommand with one).
func shellWord(s string) string { return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'" }
