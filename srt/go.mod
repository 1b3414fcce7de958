module github.com/srt-sandbox/srt

go 1.26.8

// Test-only: the settings tests check shared/settings-examples against
// shared/settings.schema.json, which needs a JSON Schema validator.
require github.com/santhosh-tekuri/jsonschema/v6 v6.0.3

// Test-only: the e2e tests verify srt-proxy's SigV4 signing again with
// the AWS SDK's signer, an implementation independent of srt-proxy's.
require github.com/aws/aws-sdk-go-v2 v1.48.0

require (
	github.com/cpuguy83/go-md2man/v2 v2.0.7 // indirect
	github.com/russross/blackfriday/v2 v2.1.0 // indirect
	github.com/srt-sandbox/decider v0.0.0
	github.com/urfave/cli/v2 v2.27.7
	github.com/xrash/smetrics v0.0.0-20240521201337-686a1a2994c1 // indirect
	golang.org/x/sys v0.50.0
	golang.org/x/text v0.21.0 // indirect
)

require (
	github.com/google/nftables v0.3.0
	github.com/vishvananda/netns v0.0.5
)

require (
	github.com/aws/smithy-go v1.28.9 // indirect
	github.com/google/go-cmp v0.6.0 // indirect
	github.com/mdlayher/netlink v1.7.3-0.20250113171957-fbb4dce95f42 // indirect
	github.com/mdlayher/socket v0.5.0 // indirect
	golang.org/x/net v0.33.0 // indirect
	golang.org/x/sync v0.10.0 // indirect
)

replace github.com/srt-sandbox/decider => ../decider
