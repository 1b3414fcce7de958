package main

import (
	"io"
	"strings"
)

// helpWidth is where --help wraps its lines, as the reference's does.
const helpWidth = 80

// printHelp writes --help: proxy-only mode's options, each once, with its
// default in its text where it has one. The options of srt's mode are not
// listed: srt passes them, and proxy-only mode refuses them.
func printHelp(w io.Writer) {
	var b strings.Builder
	b.WriteString("Usage: srt-proxy --decider-fd <fd> --listen-fd <fd> [options]\n\n")
	b.WriteString(wrap("srt's HTTP egress gate: every request is decided by a decider process on inherited descriptors (docs/srt-proxy.md). `srt proxy` runs it too.", 0, helpWidth))
	b.WriteString("\nOptions:\n")
	col := 0
	for _, o := range options {
		if o.usage != "" {
			col = max(col, len(spelling(o)))
		}
	}
	col += 4 // two spaces before, two after
	for _, o := range options {
		if o.usage == "" {
			continue
		}
		s := "  " + spelling(o)
		b.WriteString(s + strings.Repeat(" ", col-len(s)))
		b.WriteString(wrap(o.usage, col, helpWidth)[col:])
	}
	b.WriteString("\n")
	b.WriteString(wrap("srt starts srt-proxy with --srt-mode and options of its own (docs/architecture.md); proxy-only mode refuses them.", 0, helpWidth))
	io.WriteString(w, b.String())
}

// spelling is how --help names an option: "-d, --debug",
// "--listen <host:port>".
func spelling(o option) string {
	s := o.name
	if o.alias != "" {
		s = o.alias + ", " + s
	}
	if o.value != "" {
		s += " " + o.value
	}
	return s
}

// wrap breaks text into lines of at most width columns, every line
// indented by indent spaces, each ended by a newline.
func wrap(text string, indent, width int) string {
	var b strings.Builder
	line := strings.Repeat(" ", indent)
	n := indent
	for _, word := range strings.Fields(text) {
		if n > indent && n+1+len(word) > width {
			b.WriteString(line + "\n")
			line, n = strings.Repeat(" ", indent), indent
		}
		if n > indent {
			line += " "
			n++
		}
		line += word
		n += len(word)
	}
	b.WriteString(line + "\n")
	return b.String()
}
