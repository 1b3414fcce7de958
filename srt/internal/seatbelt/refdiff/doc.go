// Package refdiff holds the differential test of srt's Seatbelt profile
// generator (internal/seatbelt) against the reference's
// (@anthropic-ai/sandbox-runtime's macOS wrapper, run under Node as a
// black box by testdata/refgen.mjs). It has no code outside its tests.
//
// Both generators get the same settings file, working directory, home,
// environment and proxy ports; both profiles are parsed and normalised by
// internal/sbpl and must grant the same permissions, and both commands
// must make the same environment changes, except for the differences
// listed, each with its reason, in testdata/deliberate-differences.txt.
//
// Run it with the reference installed:
//
//	npm install --prefix /tmp/ref @anthropic-ai/sandbox-runtime@0.0.83
//	SRT_REFERENCE_DIR=/tmp/ref/node_modules/@anthropic-ai/sandbox-runtime \
//	  go test ./srt/internal/seatbelt/refdiff
//
// Without Node or SRT_REFERENCE_DIR the test skips, saying so; with
// SRT_REQUIRE_REFERENCE=1 (scripts/test sets it once it has installed the
// reference) it fails instead.
package refdiff
