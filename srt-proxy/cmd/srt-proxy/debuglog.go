package main

import (
	"fmt"
	"io"

	"github.com/rs/zerolog"
)

// recordFields is the order of a decision line's fields (the proxy's
// record, internal/proxy/record.go): what was decided and why first.
var recordFields = []string{"decision", "reason", "kind", "host", "port", "user", "addr", "bytes_up", "bytes_down", "duration_ms", "inject"}

// debugLogger is the log of -d, in either mode: one line per decision
// record, "<prefix> decision=… reason=… …", and the few debug messages
// ("<prefix> <message>"). Without debug it discards everything.
func debugLogger(debug bool, prefix string, w io.Writer) zerolog.Logger {
	if !debug {
		return zerolog.Nop()
	}
	return zerolog.New(zerolog.ConsoleWriter{
		Out: w, NoColor: true,
		PartsOrder:  []string{zerolog.MessageFieldName},
		FieldsOrder: recordFields,
		FormatMessage: func(i any) string {
			if i == nil { // a decision record has no message
				return prefix
			}
			return fmt.Sprintf("%s %v", prefix, i)
		},
	})
}
