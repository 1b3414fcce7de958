package settings

import "github.com/srt-sandbox/decider/settingsfile"

// The file is read and checked with decider/settingsfile, which the decider
// run on its own (`decider --settings`) shares for the network block, so that
// both refuse a block with the same messages. These names keep this
// package's checks short.
type (
	// Issue is one problem found in a settings file.
	Issue = settingsfile.Issue

	value = settingsfile.Value
	path  = settingsfile.Path
	field = settingsfile.Field
)

const (
	kindBool   = settingsfile.Bool
	kindNumber = settingsfile.Number
	kindString = settingsfile.String
	kindArray  = settingsfile.Array
	kindObject = settingsfile.Object
)

// checker is the shared checker with the checks of srt's own keys.
type checker struct{ settingsfile.Checker }
