package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// option is one of srt-proxy's options as the command line spells it:
// whether it takes a value, how the reference (commander) names that value
// in "argument missing", what kind of value it must be, and its line in
// --help.
type option struct {
	name     string // "--listen"
	alias    string // "-d"; "" when none
	value    string // "<fd>", "<host:port>", …; "" for a switch
	variadic bool   // takes every following argument up to the next option
	check    func(name, v string) error
	usage    string // its --help text; "" for the options of srt's mode, which --help does not show
}

// options are srt-proxy's options: proxy-only mode's (as the reference's
// `srt proxy`, in --help's order), then srt's mode's, which srt passes
// when it starts srt-proxy (--srt-mode; docs/architecture.md).
var options = []option{
	{name: "--listen-fd", value: "<fd>", usage: "accept connections on this inherited listening socket (repeatable)"},
	{name: "--listen", value: "<host:port>", usage: "listen on this loopback address instead (development); a non-loopback address needs --listen-any-interface"},
	{name: "--listen-any-interface", usage: "let --listen and --metrics-listen bind a non-loopback address: such a listener is unauthenticated and reachable from other hosts"},
	{name: "--decider-fd", value: "<fd>", usage: "the decider: one bidirectional stream (a socket)"},
	{name: "--decider-in", value: "<fd>", usage: "decider -> proxy stream (with --decider-out)"},
	{name: "--decider-out", value: "<fd>", usage: "proxy -> decider stream (with --decider-in)"},
	{name: "--decider-framing", value: "<line|length>", usage: "line: one JSON object per line (the default); length: the reference's 4-byte length prefix"},
	{name: "--lifeline-fd", value: "<fd>", usage: "stop when this stream ends"},
	{name: "--ca-fd", value: "<fd>", usage: "read the TLS-termination CA (key and certificate PEM) from this fd; without it every CONNECT is refused"},
	{name: "--strip-response-header", value: "<name...>", variadic: true, usage: "response headers never passed back"},
	{name: "--plaintext-header-set", usage: "let allow verdicts set headers on plain-HTTP requests (cleartext)"},
	{name: "--plaintext-inject", usage: "put masked secrets (srt.mask.v1) back into plain-HTTP requests too (cleartext), not only inside TLS tunnels it terminates"},
	{name: "--sigv4-streaming", value: "<deny|passthrough>", usage: "an AWS request with a masked key and a streaming-signed body: deny refuses it (unless given), passthrough forwards it as signed"},
	{name: "--sigv4-presigned", value: "<deny|passthrough>", usage: "the same for a presigned AWS URL"},
	{name: "--sigv4a", value: "<deny|passthrough>", usage: "the same for an AWS SigV4a signature"},
	{name: "--verdict-timeout", value: "<duration>", check: checkDuration, usage: "how long a request waits for its verdict (default 5s)"},
	{name: "--metrics-listen", value: "<host:port>", usage: "serve Prometheus metrics at http://<host:port>/metrics (a loopback address unless --listen-any-interface)"},
	{name: "--debug", alias: "-d", usage: "one decision line per request on stderr"},
	{name: "--version", usage: `print "srt-proxy <version>" and exit; every other option is ignored`},
	{name: "--help", alias: "-h", usage: "print this help and exit"},

	{name: "--srt-mode"},
	{name: "--control-fd", value: "<fd>"},
	{name: "--parent-http", value: "<url>"},
	{name: "--parent-https", value: "<url>"},
	{name: "--no-proxy", value: "<list>"},
	{name: "--parent-all"},
	{name: "--tls-terminate"},
	{name: "--tls-ca-cert", value: "<path>"},
	{name: "--tls-ca-key", value: "<path>"},
	{name: "--tls-bundle-out", value: "<path>"},
	{name: "--tls-extra-ca", value: "<path>"},
	{name: "--tls-exclude", value: "<pattern>"},
	{name: "--max-tunnels", value: "<n>", check: checkInt},
	{name: "--handshake-timeout", value: "<duration>", check: checkDuration},
	{name: "--refuse-opaque-tunnels"},
	{name: "--require-host-match"},
	{name: "--ambiguous-target", value: "<refuse|asSpelled|normalize>"},
	{name: "--mitm-socket", value: "<path>"},
	{name: "--mitm-domain", value: "<pattern>"},
}

// optionsByName finds an option by its name or alias.
var optionsByName = func() map[string]*option {
	m := make(map[string]*option, 2*len(options))
	for i := range options {
		o := &options[i]
		m[o.name] = o
		if o.alias != "" {
			m[o.alias] = o
		}
	}
	return m
}()

// checkDuration refuses a value time.ParseDuration does not read.
func checkDuration(name, v string) error {
	if _, err := time.ParseDuration(v); err != nil {
		return &usageError{fmt.Sprintf("srt proxy: %s needs a duration such as 5s or 500ms (got %s)", name, jsonQuote(v))}
	}
	return nil
}

// checkInt refuses a value that is not a decimal integer.
func checkInt(name, v string) error {
	if _, err := strconv.Atoi(v); err != nil {
		return &usageError{fmt.Sprintf("srt proxy: %s needs a whole number (got %s)", name, jsonQuote(v))}
	}
	return nil
}

// usageError is a command line refused before either mode looks at it:
// the reference's own text (commander's "error: …") or srt-proxy's, said
// as it is, exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// normalizeArgs checks args (without the program name) the way the
// reference's commander does — an unknown option, an option without its
// argument — and that a value of a typed option reads as one, and returns
// them in the form urfave/cli parses: a variadic option's values each
// after an option of their own. An argument that is not an option nor an
// option's value is refused.
func normalizeArgs(args []string) ([]string, error) {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if i+1 < len(args) {
				return nil, fmt.Errorf("unexpected argument %q", args[i+1])
			}
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			return nil, fmt.Errorf("unexpected argument %q", a)
		}
		name, value, inline := strings.Cut(a, "=")
		spec, known := optionsByName[name]
		if !known || (inline && spec.value == "") {
			return nil, &usageError{fmt.Sprintf("error: unknown option '%s'", a)}
		}
		missing := &usageError{fmt.Sprintf("error: option '%s %s' argument missing", name, spec.value)}
		switch {
		case spec.value == "":
			out = append(out, a)
			continue
		case spec.variadic && !inline:
			n := 0
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				n++
				out = append(out, name+"="+args[i])
			}
			if n == 0 {
				return nil, missing
			}
			continue
		case !inline:
			if i+1 == len(args) {
				return nil, missing
			}
			i++
			value = args[i]
		}
		if spec.check != nil {
			if err := spec.check(name, value); err != nil {
				return nil, err
			}
		}
		out = append(out, name+"="+value)
	}
	return out, nil
}

// wantsVersion reports whether --version is anywhere on the command line:
// then srt-proxy prints its version and does nothing else (no other option
// is looked at, no descriptor touched), as the reference does.
func wantsVersion(args []string) bool {
	return hasArg(args, "--version")
}

// wantsHelp reports whether -h or --help is anywhere on the command line:
// then srt-proxy prints its help, whatever else is there, as the
// reference does.
func wantsHelp(args []string) bool {
	return hasArg(args, "--help", "-h")
}

func hasArg(args []string, names ...string) bool {
	for _, a := range args {
		for _, n := range names {
			if a == n {
				return true
			}
		}
	}
	return false
}
