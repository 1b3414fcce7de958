package protocol

// Fixed reasons of a *ProtocolError. Logs, tests and the conformance vectors
// compare them; the proxy reports them as "request decider: <reason>".
const (
	// Framing.
	ReasonOversized = "oversized frame"
	ReasonBlankLine = "blank line"
	ReasonCRLF      = "carriage return before newline"

	// JSON, before the message is looked at (the reference's wording).
	ReasonNotUTF8       = "frame is not UTF-8"
	ReasonNotJSON       = "frame is not valid JSON"
	ReasonNotObject     = "frame is not one JSON object"
	ReasonNull          = "null in frame"
	ReasonLoneSurrogate = "lone surrogate in frame"
	ReasonDuplicateKey  = "duplicate key in frame"
	ReasonTooDeep       = "frame nested too deeply"

	// The message: a "t" this direction does not carry, or one whose fields
	// break its rules.
	ReasonUnexpected = "unexpected message"
	ReasonBadHello   = "bad hello"
	ReasonBadVerdict = "bad verdict frame"
	ReasonBadUpdate  = "bad update frame"
	ReasonBadReq     = "bad req frame"
	ReasonBadBody    = "bad body frame"
	ReasonBadRefused = "bad refused frame"
	ReasonBadSync    = "bad sync frame"
)

// ProtocolError is a violation of the decider protocol: the link that
// carried (or would carry) the message is dead. Reason is one of the Reason*
// constants; Detail says which field broke which rule, for debug logs only.
type ProtocolError struct {
	Reason string
	Detail string
}

func (e *ProtocolError) Error() string { return e.Reason }

func violation(reason, detail string) *ProtocolError {
	return &ProtocolError{Reason: reason, Detail: detail}
}

// Refusals of a request the proxy cannot ask the decider about; it answers
// such a request 400 (X-Deny-Reason: bad_request) itself.
const (
	RefuseHeadersTooLarge = "request headers too large"
	RefuseTargetTooLarge  = "request target too large"
	RefuseTooLarge        = "request too large for the decider"
	RefuseBadHeader       = "request header the decider cannot be asked about"
	RefuseBadRequest      = "request the decider cannot be asked about"
	RefuseTwoHostHeaders  = "more than one Host header"
)

// UnaskableError is a request that no valid req can carry. Reason is one of
// the Refuse* constants, the body of the proxy's 400 answer.
type UnaskableError struct {
	Reason string
}

func (e *UnaskableError) Error() string { return e.Reason }
