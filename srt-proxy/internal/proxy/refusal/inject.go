package refusal

// CauseInjectRefused: an allowed request names masked secrets
// (srt.mask.v1) that the proxy cannot put back as the request stands
// (Reason says why, e.g. WhyMaskedBodyTooLarge); nothing is forwarded
// (403). Numbered apart from the other lists so that each can grow.
const CauseInjectRefused Cause = 96

// CodeInjectRefused is its X-Deny-Reason code and Decision reason.
const CodeInjectRefused = "inject_refused"

// MaxMaskedBody is the largest request body the proxy holds in memory to
// put masked secrets back when they change its length: a Content-Length
// body whose new length must be known before it is sent.
const MaxMaskedBody = 64 << 20

// WhyMaskedBodyTooLarge refuses a Content-Length body over MaxMaskedBody
// whose masked secrets change its length; compared verbatim by clients.
const WhyMaskedBodyTooLarge = "the request body carries masked secrets whose values change its length, so it is held in memory to be sent with its new Content-Length, and it is over the 64 MiB limit for that; send it chunked (Transfer-Encoding: chunked), which is streamed; nothing was forwarded"

// WhyMaskedHeaderBreak refuses a request whose header carries the
// sentinel of a masked secret whose value holds a line break or a NUL,
// which would end the header upstream (a secret read from a whole file,
// say); compared verbatim by clients.
const WhyMaskedHeaderBreak = "a header carries a masked secret whose value holds a line break or NUL, which cannot go in a header; nothing was forwarded"

// renderInject renders CauseInjectRefused: 403 with the reason, tagged
// as each mode tags its own policy refusals; ok is false for every other
// cause.
func renderInject(r Refusal, header, tag string) (Answer, bool) {
	if r.Cause != CauseInjectRefused {
		return Answer{}, false
	}
	return Answer{Status: 403, Phrase: "Forbidden", SOCKS: SOCKSNotAllowed,
		Header: [][2]string{{"Content-Type", textPlain}, {header, tag}}, Body: r.Reason + "\n"}, true
}
