package seatbelt

import (
	"regexp"
	"strconv"
	"strings"
)

// Denial is one operation a command's profile refused, as macOS's log
// reports it: the kernel's "Sandbox: <process>(<pid>) deny(<n>) <operation>
// <target>" message, followed by the profile's message (LogTag).
type Denial struct {
	Process   string
	PID       int
	Operation string // file-read-data, network-outbound, mach-lookup, …
	Target    string // a path, an address, a service name; "" for none
	// Label is the attribution key's label the tag carries
	// (srtlink.KeyLabel of the command's key).
	Label string
	// Line is the violation as srt records it: "deny <operation>
	// <target> (<process>)".
	Line string
}

// LogPredicate is the `log stream --predicate` that selects the denials of
// the profiles whose log tags end in nonce's suffix: every command srt
// started with that nonce (LogTag).
func LogPredicate(nonce string) string {
	return `eventMessage ENDSWITH "_END__` + nonce + `_SBX"`
}

// LogStreamArgs is the argument vector of the `log stream` that reports
// the denials of the profiles made with nonce.
func LogStreamArgs(nonce string) []string {
	return []string{"/usr/bin/log", "stream", "--predicate", LogPredicate(nonce), "--style", "compact"}
}

// kernelHeader is what `log stream` writes before the message of a
// denial: the kernel (pid 0) as the sender and Sandbox as its image, in
// the compact style ("<date> <time> E  kernel[0:2f1a3] (Sandbox) "), the
// default style ("<date> <time+zone> <thread> Error <activity> 0 <ttl>
// kernel: (Sandbox) ") or the syslog style ("<date> <time> <host>
// kernel[0]: (Sandbox) "). Any process can log a message that reads like
// a denial (logger, os_log: the sandbox lets it reach the log), and a
// denied path with a newline in it makes the rest of the kernel's message
// a line of its own: neither has this header. (A process whose image
// name spells a header can still forge one; LogPredicate leaves that to
// the label and nonce checks.)
var kernelHeader = regexp.MustCompile(`^\S+ \S+ +(` +
	`\S+ +kernel\[0(:[0-9a-fA-F]+)?\]:? ` + // compact, syslog
	`|0x[0-9a-fA-F]+ +\S+ +0x[0-9a-fA-F]+ +0 +[0-9]+ +kernel: ` + // default
	`)\(Sandbox\) $`)

// noise are denials macOS's own machinery causes in every sandbox, which
// say nothing about the command: logging and analytics lookups.
var noise = []string{"com.apple.diagnosticd", "com.apple.analyticsd"}

// ParseLogLine reads one line of `log stream` output (any --style: the
// message is found by its "Sandbox: " prefix after the kernel's header,
// kernelHeader) and returns the denial it
// reports, if it is one of a profile made with nonce. Everything else —
// headers, other sandboxes' denials, "duplicate report" summaries, lines
// without a tag or with another nonce's, the noise of macOS's logging
// services — is not a denial of srt's. The line is attacker-influenced (a
// command chooses the paths it is denied), so nothing in it is trusted but
// its shape: the label is returned as found, for the caller to compare
// with the keys it registered.
func ParseLogLine(line, nonce string) (Denial, bool) {
	line = strings.TrimRight(line, "\r\n")
	i := strings.Index(line, "Sandbox: ")
	if i < 0 || !kernelHeader.MatchString(line[:i]) {
		return Denial{}, false
	}
	msg := line[i+len("Sandbox: "):]
	// The tag is the last word: CMD64_<label>_END__<nonce>_SBX.
	suffix := "_END__" + nonce + "_SBX"
	sp := strings.LastIndexByte(msg, ' ')
	if nonce == "" || sp < 0 || !strings.HasSuffix(msg, suffix) {
		return Denial{}, false
	}
	tag := msg[sp+1:]
	label, ok := strings.CutPrefix(strings.TrimSuffix(tag, suffix), "CMD64_")
	if !ok || strings.Trim(label, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") != "" {
		return Denial{}, false // a label is standard base64
	}
	msg = msg[:sp]
	// <process>(<pid>) deny(<n>) <operation> [<target>]
	// A process name may hold spaces and parentheses ("Code Helper
	// (Renderer)"): the pid is the last parenthesis before " deny(".
	closeP := strings.Index(msg, ") deny(")
	if closeP < 0 {
		return Denial{}, false
	}
	open := strings.LastIndexByte(msg[:closeP], '(')
	if open <= 0 {
		return Denial{}, false
	}
	pid, err := strconv.Atoi(msg[open+1 : closeP])
	if err != nil || pid < 0 {
		return Denial{}, false
	}
	rest := msg[closeP+len(") deny("):]
	n := strings.Index(rest, ") ")
	if n < 0 {
		return Denial{}, false
	}
	if _, err := strconv.Atoi(rest[:n]); err != nil {
		return Denial{}, false
	}
	op, target, _ := strings.Cut(rest[n+2:], " ")
	if op == "" {
		return Denial{}, false
	}
	d := Denial{Process: msg[:open], PID: pid, Operation: op, Target: target, Label: label}
	for _, s := range noise {
		if op == "mach-lookup" && target == s {
			return Denial{}, false
		}
	}
	d.Line = "deny " + op
	if target != "" {
		d.Line += " " + target
	}
	d.Line += " (" + d.Process + ")"
	return d, true
}
