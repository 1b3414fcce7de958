package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/rs/zerolog"

	"github.com/srt-sandbox/decider/policy"
	"github.com/srt-sandbox/decider/protocol"
	"github.com/srt-sandbox/decider/sanitize"
)

// The decision record: one log line per request the decider answers, with
// the keys of srt-proxy's own record (decision, reason, kind, host, port,
// user), then the decider's: the request's id and method, and the settings
// entry that decided (rule). A request srt-proxy refuses after the
// decider's allow gets a second line, with srt-proxy's reason.
const (
	keyDecision = "decision"
	keyReason   = "reason"
	keyKind     = "kind"
	keyHost     = "host"
	keyPort     = "port"
	keyUser     = "user"
	keyID       = "id"
	keyMethod   = "method"
	keyRule     = "rule"
)

// recordKeys is their order in a text line.
var recordKeys = []string{keyDecision, keyReason, keyKind, keyHost, keyPort, keyUser, keyID, keyMethod, keyRule}

// The decisions, as srt-proxy's record names them.
const (
	decisionAllow = "allow"
	decisionDeny  = "deny"
	decisionFail  = "fail" // not completed: the upstream could not be reached
)

// msgRefused is the message of the line for a refusal after an allow.
const msgRefused = "refused by srt-proxy after the decider's allow"

// kindOf is a req's kind: srt.v1's, or else "http" (without srt.v1 srt-proxy
// asks about HTTP requests alone).
func kindOf(k protocol.Kind) string {
	if k == protocol.KindNone {
		return protocol.KindHTTP.String()
	}
	return k.String()
}

// record logs the decision for r.
func (d *decider) record(r *protocol.Req, dec policy.Decision) {
	e := d.log.Info()
	if !e.Enabled() {
		return
	}
	decision := decisionDeny
	if dec.Allow {
		decision = decisionAllow
	}
	e.Str(keyDecision, decision).
		Str(keyReason, sanitize.Line(dec.Reason)).
		Str(keyKind, kindOf(r.Kind)).
		Str(keyHost, r.Host).
		Int(keyPort, r.Port).
		Str(keyUser, r.User).
		Uint64(keyID, r.ID).
		Str(keyMethod, r.Method).
		Str(keyRule, dec.Rule).
		Send()
}

// refusedRecord logs srt-proxy's refusal of request id after an allow: a
// policy refusal (the resolved-address check, the proxy's request rules)
// is a deny, an unreachable upstream a fail.
func (d *decider) refusedRecord(id uint64, a allowedReq, reason string) {
	e := d.log.Info()
	if !e.Enabled() {
		return
	}
	decision := decisionDeny
	if strings.HasPrefix(reason, "upstream unreachable") {
		decision = decisionFail
	}
	kind := a.kind
	if kind == "" {
		kind = protocol.KindHTTP.String()
	}
	e.Str(keyDecision, decision).
		Str(keyReason, sanitize.Line(reason)).
		Str(keyKind, kind).
		Str(keyHost, a.host).
		Int(keyPort, a.port).
		Str(keyUser, a.user).
		Uint64(keyID, id).
		Str(keyMethod, a.method).
		Str(keyRule, "").
		Msg(msgRefused)
}

// textLogger writes one line per event: prefix, the message, then the
// fields as key=value (the record's keys first, in their order), as
// srt-proxy's --debug lines are written.
func textLogger(w io.Writer, prefix string) zerolog.Logger {
	return zerolog.New(zerolog.ConsoleWriter{Out: w, NoColor: true,
		PartsExclude: []string{zerolog.TimestampFieldName, zerolog.LevelFieldName},
		FieldsOrder:  recordKeys,
		FormatMessage: func(i any) string {
			if i == nil || i == "" {
				return strings.TrimSuffix(prefix, " ")
			}
			return fmt.Sprintf("%s%v", prefix, i)
		}})
}

// jsonLogger writes one JSON object per event: level, time, message and
// the fields (zerolog's own format).
func jsonLogger(w io.Writer) zerolog.Logger {
	return zerolog.New(w).With().Timestamp().Logger()
}

// zerologLevel is the logger's level: debug lines only with -d.
func zerologLevel(debug bool) zerolog.Level {
	if debug {
		return zerolog.DebugLevel
	}
	return zerolog.InfoLevel
}
