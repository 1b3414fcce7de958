package main

import (
	"fmt"
	"strings"
)

// flagSpec is one option as the command line spells it: whether it takes
// a value, and how the reference (commander) names its argument in
// "argument missing".
type flagSpec struct {
	value    string // "<fd>", "<host:port>", …; "" for a switch
	variadic bool   // takes every following argument up to the next option
}

// flagSpecs are srt-proxy's options (proxy-only mode's, as the
// reference's `srt proxy`, and srt's mode's).
var flagSpecs = map[string]flagSpec{
	"--listen-fd":             {value: "<fd>"},
	"--listen":                {value: "<host:port>"},
	"--listen-any-interface":  {},
	"--decider-fd":            {value: "<fd>"},
	"--decider-in":            {value: "<fd>"},
	"--decider-out":           {value: "<fd>"},
	"--decider-framing":       {value: "<line|length>"},
	"--lifeline-fd":           {value: "<fd>"},
	"--ca-fd":                 {value: "<fd>"},
	"--strip-response-header": {value: "<name...>", variadic: true},
	"--plaintext-header-set":  {},
	"--verdict-timeout":       {value: "<duration>"},
	"-d":                      {},
	"--debug":                 {},
	"--version":               {},
	"-h":                      {},
	"--help":                  {},
	"--srt-mode":              {},
	"--control-fd":            {value: "<fd>"},
	"--parent-http":           {value: "<url>"},
	"--parent-https":          {value: "<url>"},
	"--no-proxy":              {value: "<list>"},
	"--tls-terminate":         {},
	"--tls-ca-cert":           {value: "<path>"},
	"--tls-ca-key":            {value: "<path>"},
	"--tls-bundle-out":        {value: "<path>"},
	"--tls-extra-ca":          {value: "<path>"},
	"--tls-exclude":           {value: "<pattern>"},
	"--max-tunnels":           {value: "<n>"},
	"--handshake-timeout":     {value: "<duration>"},
	"--refuse-opaque-tunnels": {},
	"--require-host-match":    {},
	"--ambiguous-target":      {value: "<refuse|asSpelled|normalize>"},
}

// usageError is a command line the reference refuses with its own text
// (commander's "error: …"), exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// normalizeArgs checks args (without the program name) the way the
// reference's commander does — an unknown option, an option without its
// argument — and returns them in the form urfave/cli parses: a variadic
// option's values each after an option of their own. An argument that is
// not an option nor an option's value is refused.
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
		spec, known := flagSpecs[name]
		if !known || (inline && spec.value == "") {
			return nil, &usageError{fmt.Sprintf("error: unknown option '%s'", a)}
		}
		switch {
		case spec.value == "":
			out = append(out, a)
		case inline:
			out = append(out, name+"="+value)
		case spec.variadic:
			n := 0
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				n++
				out = append(out, name+"="+args[i])
			}
			if n == 0 {
				return nil, &usageError{fmt.Sprintf("error: option '%s %s' argument missing", name, spec.value)}
			}
		default:
			if i+1 == len(args) {
				return nil, &usageError{fmt.Sprintf("error: option '%s %s' argument missing", name, spec.value)}
			}
			i++
			out = append(out, name+"="+args[i])
		}
	}
	return out, nil
}

// wantsVersion reports whether --version is anywhere on the command line:
// then srt-proxy prints its version and does nothing else (no other option
// is looked at, no descriptor touched), as the reference does.
func wantsVersion(args []string) bool {
	for _, a := range args {
		if a == "--version" {
			return true
		}
	}
	return false
}
