package settings

import (
	"sync"

	"github.com/srt-sandbox/decider/settingsfile"
)

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

// sectionKeys maps each key of the top-level sections (network,
// filesystem, credentials), lower-cased, to its path, for the hint of an
// unknown key written elsewhere (settingsfile.Checker.Hints). It is learnt
// by checking a file of empty sections once, so that it follows the
// fields the checker knows.
func sectionKeys() map[string]string {
	sections.once.Do(func() {
		root, err := settingsfile.Parse([]byte(`{"network":{},"filesystem":{},"credentials":{}}`))
		if err != nil {
			panic(err)
		}
		c := &checker{}
		c.Learn = map[string]string{}
		c.Object(nil, root, c.topFields(Default(), root))
		sections.keys = c.Learn
	})
	return sections.keys
}

var sections struct {
	once sync.Once
	keys map[string]string
}
