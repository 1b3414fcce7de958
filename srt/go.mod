module github.com/srt-sandbox/srt

go 1.26.8

// Test-only: the settings tests check shared/settings-examples against
// shared/settings.schema.json, which needs a JSON Schema validator.
require github.com/santhosh-tekuri/jsonschema/v6 v6.0.3

require (
	github.com/cpuguy83/go-md2man/v2 v2.0.7 // indirect
	github.com/russross/blackfriday/v2 v2.1.0 // indirect
	github.com/srt-sandbox/decider v0.0.0
	github.com/urfave/cli/v2 v2.27.7
	github.com/xrash/smetrics v0.0.0-20240521201337-686a1a2994c1 // indirect
	golang.org/x/sys v0.50.0
	golang.org/x/text v0.14.0 // indirect
)

require github.com/vishvananda/netns v0.0.5

replace github.com/srt-sandbox/decider => ../decider
