//go:build linux

package main

import (
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/rules"
)

// TestProxyOnlyInjectFlags: proxy-only mode reads --plaintext-inject and
// the sigv4 flags into what its request path reads (proxy.Server.Rules).
func TestProxyOnlyInjectFlags(t *testing.T) {
	for _, c := range []struct {
		args                []string
		inject              bool
		stream, presign, v4 rules.SigV4Mode
	}{
		{nil, false, rules.SigV4Deny, rules.SigV4Deny, rules.SigV4Deny},
		{[]string{"--plaintext-inject", "--sigv4-streaming=passthrough", "--sigv4a=deny"}, true, rules.SigV4Passthrough, rules.SigV4Deny, rules.SigV4Deny},
		{[]string{"--sigv4-presigned=passthrough", "--sigv4a=passthrough"}, false, rules.SigV4Deny, rules.SigV4Passthrough, rules.SigV4Passthrough},
	} {
		var o *proxyOnlyOpts
		var err error
		app := &cli.App{Flags: flags(), Action: func(ctx *cli.Context) error {
			o, err = proxyOnlyOptions(ctx)
			return nil
		}}
		// Descriptor 0 is inherited (close-on-exec clear).
		norm, nerr := normalizeArgs(append([]string{"--decider-fd", "0", "--listen", "127.0.0.1:0"}, c.args...))
		if nerr != nil {
			t.Fatal(nerr)
		}
		if rerr := app.Run(append([]string{"srt-proxy"}, norm...)); rerr != nil || err != nil {
			t.Fatalf("%v: %v, %v", c.args, rerr, err)
		}
		if o.plaintextInject != c.inject || o.sigv4Streaming != c.stream || o.sigv4Presigned != c.presign || o.sigv4A != c.v4 {
			t.Errorf("%v: read %+v", c.args, o)
		}
	}
}
