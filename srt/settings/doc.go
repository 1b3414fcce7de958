// Package settings reads srt's settings file (the JSON format of the
// reference implementation, @anthropic-ai/sandbox-runtime 0.0.83) and turns
// it into a validated Config.
//
// Decoding is strict and happens in one pass of named checks: every problem
// in a file is reported at once, each with the dotted path of the field
// (network.allowedDomains.3) and a message that says what is wrong. Unlike
// the reference, keys srt does not know are refused, and so are duplicate
// keys: in a security setting a typo must not silently drop a rule.
//
// The wire format is described by shared/settings.schema.json in the
// repository; this package is the authority, and the schema is checked
// against it by tests.
package settings
