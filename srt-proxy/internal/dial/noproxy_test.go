package dial

import "testing"

func TestNoProxyBypass(t *testing.T) {
	tests := []struct {
		name    string
		noProxy string
		host    string
		want    bool
	}{
		{"empty list", "", "example.com", false},
		{"loopback name always direct", "", "localhost", true},
		{"loopback subdomain always direct", "", "app.localhost", true},
		{"loopback IPv4 always direct", "", "127.0.0.1", true},
		{"loopback IPv4 range always direct", "", "127.9.9.9", true},
		{"loopback IPv6 always direct", "", "::1", true},
		{"not loopback", "", "10.0.0.1", false},
		{"star", "*", "example.com", true},
		{"star for IPs", "*", "192.0.2.1", true},
		{"star among others", "a.com, *", "b.com", true},
		{"exact domain", "example.com", "example.com", true},
		{"domain covers subdomains", "example.com", "api.example.com", true},
		{"domain is not a suffix of another name", "example.com", "badexample.com", false},
		{"leading dot covers the domain", ".example.com", "example.com", true},
		{"leading dot covers subdomains", ".example.com", "a.b.example.com", true},
		{"wildcard covers the domain", "*.example.com", "example.com", true},
		{"wildcard covers subdomains", "*.example.com", "x.example.com", true},
		{"case-insensitive entry", "EXAMPLE.com", "example.com", true},
		{"trailing dot in the host", "example.com", "example.com.", true},
		{"port ignored", "example.com:8080", "example.com", true},
		{"spaces trimmed", "  a.com ,  example.com  ", "example.com", true},
		{"empty entries skipped", ",,example.com,", "example.com", true},
		{"IPv4 literal", "192.0.2.7", "192.0.2.7", true},
		{"IPv4 literal other address", "192.0.2.7", "192.0.2.8", false},
		{"IPv4 literal with port", "192.0.2.7:80", "192.0.2.7", true},
		{"IPv4 CIDR", "10.0.0.0/8", "10.1.2.3", true},
		{"IPv4 CIDR outside", "10.0.0.0/8", "11.0.0.1", false},
		{"IPv6 literal", "2001:db8::1", "2001:db8::1", true},
		{"bracketed IPv6", "[2001:db8::1]", "2001:db8::1", true},
		{"bracketed IPv6 with port", "[2001:db8::1]:443", "2001:db8::1", true},
		{"IPv6 CIDR", "2001:db8::/32", "2001:db8:1::5", true},
		{"IPv4-mapped CIDR", "::ffff:10.0.0.0/104", "10.2.3.4", true},
		{"malformed CIDR ignored", "10.0.0.0/99,example.com", "10.0.0.1", false},
		{"IP host never matches a domain suffix", "0.0.1", "10.0.0.1", false},
		{"name never matches a CIDR", "10.0.0.0/8", "10.example", false},
		{"RFC1918 list (the sandbox's own NO_PROXY)", "localhost,127.0.0.1,::1,169.254.0.0/16,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16", "172.20.1.1", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ParseNoProxy(tt.noProxy).Bypass(tt.host); got != tt.want {
				t.Errorf("NO_PROXY=%q Bypass(%q) = %v, want %v", tt.noProxy, tt.host, got, tt.want)
			}
		})
	}
	var nilList *NoProxy
	if !nilList.Bypass("localhost") || nilList.Bypass("example.com") {
		t.Error("a nil NoProxy must exempt only loopback")
	}
}

// parentOf is a ParentProxy as srt-proxy's srt mode builds it from its
// flags (--parent-http, --parent-https, --no-proxy): each URL read by
// ParseParentURL, "" left out.
func parentOf(t *testing.T, httpURL, httpsURL, noProxy string) *ParentProxy {
	t.Helper()
	p := &ParentProxy{NoProxy: ParseNoProxy(noProxy)}
	var err error
	if httpURL != "" {
		if p.HTTP, err = ParseParentURL(httpURL); err != nil {
			t.Fatal(err)
		}
	}
	if httpsURL != "" {
		if p.HTTPS, err = ParseParentURL(httpsURL); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func TestParentProxyFor(t *testing.T) {
	p := parentOf(t, "proxy.corp:3128", "", "internal.corp")
	if u := p.For("example.com", true); u == nil || u.String() != "http://proxy.corp:3128" {
		t.Errorf("tunnel parent %v: without an https URL, tunnels use the http one", u)
	}
	if u := p.For("example.com", false); u == nil || u.Host != "proxy.corp:3128" {
		t.Errorf("plain parent %v", u)
	}
	if u := p.For("a.internal.corp", true); u != nil {
		t.Errorf("NO_PROXY host goes through %v", u)
	}
	if u := p.For("127.0.0.1", false); u != nil {
		t.Errorf("loopback goes through %v", u)
	}
	// --parent-all: loopback and NO_PROXY's through the parent too.
	p.All = true
	for _, h := range []string{"127.0.0.1", "localhost", "::1", "a.internal.corp", "example.com"} {
		if u := p.For(h, true); u == nil || u.Host != "proxy.corp:3128" {
			t.Errorf("--parent-all: %s goes through %v", h, u)
		}
	}

	p = parentOf(t, "", "https://u:p%40ss@secure.corp", "")
	if p.For("example.com", false) != nil {
		t.Error("plain HTTP must not use HTTPS_PROXY")
	}
	if u := p.For("example.com", true); u == nil || u.Scheme != "https" {
		t.Errorf("tunnel parent %v", u)
	}
	if got, want := ProxyAuthorization(p.HTTPS), "Basic dTpwQHNz"; got != want {
		t.Errorf("ProxyAuthorization = %q, want %q (user u, password p@ss)", got, want)
	}

	var none *ParentProxy
	if u := none.For("example.com", true); u != nil {
		t.Errorf("no parent: %v", u)
	}
	for _, bad := range []string{"socks5://h:1080", "http://", "http://[::1"} {
		if _, err := ParseParentURL(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
