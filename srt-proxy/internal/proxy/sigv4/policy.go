package sigv4

import (
	"fmt"
	"strconv"
)

// Policy is what becomes of a request in a variant that cannot be signed
// again (credentials.sigv4.streaming, .presigned, .sigv4a).
type Policy uint8

const (
	Deny        Policy = iota // refused: 403 and a Refusal naming the setting
	Passthrough               // forwarded unchanged, signed with the masked key
)

// ParsePolicy reads a policy flag's value: "deny" or "passthrough".
func ParsePolicy(flag, v string) (Policy, error) {
	switch v {
	case "deny":
		return Deny, nil
	case "passthrough":
		return Passthrough, nil
	}
	return Deny, fmt.Errorf("%s needs deny or passthrough (got %s)", flag, strconv.Quote(v))
}

func (p Policy) String() string {
	if p == Passthrough {
		return "passthrough"
	}
	return "deny"
}

// MaxBody is the most body bytes Resign buffers to hash a payload the
// client did not hash itself (no x-amz-content-sha256).
const MaxBody = 64 << 20

// Options are the sigv4 settings of a run (srt-proxy's --sigv4-streaming,
// --sigv4-presigned and --sigv4a; srt sets them from credentials.sigv4).
// The zero value denies every variant.
type Options struct {
	Streaming, Presigned, SigV4A Policy
}

// Variant names a kind of request Resign refuses.
type Variant uint8

const (
	VariantStreaming  Variant = iota + 1 // x-amz-content-sha256: STREAMING-…
	VariantPresigned                     // X-Amz-Credential in the query
	VariantSigV4A                        // AWS4-ECDSA-P256-SHA256
	VariantTooLarge                      // a body to hash over MaxBody
	VariantUnsignable                    // a request Resign cannot read (Reason says why)
)

// Refusal is why Resign refuses a request signed with a masked key: the
// proxy answers it 403 with Reason, and nothing goes upstream. Reason
// names the client's own request only; never a secret.
type Refusal struct {
	Variant Variant
	Reason  string
}

func (r *Refusal) Error() string { return r.Reason }

// variants are the refusable variants: what the reason calls them, their
// setting and flag.
var variants = map[Variant]struct{ what, setting, flag string }{
	VariantStreaming: {"a streaming upload (x-amz-content-sha256: %s)", "credentials.sigv4.streaming", "--sigv4-streaming"},
	VariantPresigned: {"a presigned request (X-Amz-Credential in the query)", "credentials.sigv4.presigned", "--sigv4-presigned"},
	VariantSigV4A:    {"a SigV4A request (%s)", "credentials.sigv4.sigv4a", "--sigv4a"},
}

// refuseVariant is the refusal of a variant; detail fills its %s.
func refuseVariant(v Variant, detail string) *Refusal {
	d := variants[v]
	what := d.what
	if detail != "" {
		what = fmt.Sprintf(what, detail)
	}
	return &Refusal{Variant: v, Reason: "sigv4: " + what + " signed with a masked AWS access key cannot be signed again with the real key; set " +
		d.setting + " to \"passthrough\" (srt-proxy " + d.flag + " passthrough) to forward such requests unchanged"}
}

// WhyTooLarge is the reason of a VariantTooLarge refusal.
const WhyTooLarge = "sigv4: the body of a request signed with a masked AWS access key, without x-amz-content-sha256, is over 64 MiB: the proxy buffers at most 64 MiB to hash it; have the client send x-amz-content-sha256 (the AWS SDKs do for S3)"

// unsignable is a VariantUnsignable refusal.
func unsignable(why string) *Refusal {
	return &Refusal{Variant: VariantUnsignable, Reason: "sigv4: a request signed with a masked AWS access key cannot be signed again: " + why}
}
