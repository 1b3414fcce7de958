// Package version holds srt's version.
package version

// Version is srt's release version.
const Version = "0.1.0"

// Reference is the version of @anthropic-ai/sandbox-runtime whose settings,
// CLI and answers srt follows.
const Reference = "0.0.83"
