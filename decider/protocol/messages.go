package protocol

import "strconv"

// Proto is the protocol version both hellos state.
const Proto = 1

// ExtSRTv1 is srt's own extension (docs/decider-protocol.md, "The srt.v1
// extension"), offered by the proxy in line framing only.
const ExtSRTv1 = "srt.v1"

// ExtMaskV1 is credential masking (docs/decider-protocol.md, "The
// srt.mask.v1 extension"): the decider gives the proxy masked secrets
// (Masks) and names, in each allow, those the proxy puts back in that
// request (Allow.Inject). Line framing only, like srt.v1.
const ExtMaskV1 = "srt.mask.v1"

// Limits of the protocol, which both ends keep.
const (
	MaxFrame        = 1 << 20   // a decider→proxy message, and a req
	MaxBody         = 32 << 20  // need_body's max; a body's decoded data
	MaxID           = 1<<53 - 1 // request ids run 1..MaxID
	MaxReason       = 1 << 10   // UTF-8 bytes of a reason
	MaxCredential   = 8 << 10   // characters of an allow's credential
	MaxHeaderValues = 190       // values in headers / setHeaders (a name without values counts one)
	MaxHeaderBytes  = 64 << 10  // UTF-8 bytes of each header name once plus its values
	MaxRemoveNames  = 190       // names in removeHeaders
	MaxRemoveBytes  = 64 << 10  // UTF-8 bytes of removeHeaders' names
	MaxTarget       = 8 << 10   // UTF-8 bytes of a req's host, Host header, SNI and path, each
	maxExtName      = 64        // bytes of an extension name
	bodyHead        = `{"t":"body","id":9007199254740991,"data":"`
	bodyTail        = `","cut":true}`
	maxBodyBase64   = (MaxBody + 2) / 3 * 4
	MaxProxyFrame   = len(bodyHead) + maxBodyBase64 + len(bodyTail) // the largest proxy→decider message: a full body
)

// Message types ("t") and verdict actions.
const (
	TypeHello   = "hello"
	TypeReq     = "req"
	TypeVerdict = "verdict"
	TypeBody    = "body"
	TypeUpdate  = "update"  // srt.v1
	TypeRefused = "refused" // srt.v1
	TypeSync    = "sync"    // srt.v1
	TypeMasks   = "masks"   // srt.mask.v1

	ActionAllow    = "allow"
	ActionDeny     = "deny"
	ActionNeedBody = "need_body"
)

// Message is one protocol message: *ProxyHello, *Req, *Body, *Refused or *Sync
// from the proxy; *DeciderHello, *Allow, *Deny, *NeedBody, *Update or
// *Masks from the decider.
//
// Optional fields follow one convention: a nil pointer, slice or Headers is
// an omitted field, and a non-nil empty one is a field present but empty,
// which the protocol forbids (Encode refuses it).
type Message interface {
	// Type is the message's "t".
	Type() string
	message()
}

// Verdict is *Allow, *Deny or *NeedBody.
type Verdict interface {
	Message
	RequestID() uint64
	Action() string
}

// ProxyHello is the proxy's first message.
type ProxyHello struct {
	Ext []string // extensions offered; nil when none (always nil in length framing)
}

// DeciderHello is the decider's answer to the proxy's hello.
type DeciderHello struct {
	AllowedDomains []string // required; Encode writes nil as []
	DeniedDomains  []string // required; Encode writes nil as []
	Ext            []string // extensions accepted, a subset of those offered
	// DeniedResolvedAddresses (srt.v1) are IP literals and CIDR ranges
	// (policy.ParseAddressRange) a hostname may not resolve to.
	DeniedResolvedAddresses []string
}

// HasExt reports whether the hello accepts the extension name.
func (h *DeciderHello) HasExt(name string) bool {
	for _, e := range h.Ext {
		if e == name {
			return true
		}
	}
	return false
}

// Kind is an srt.v1 req's "kind"; KindNone is its absence.
type Kind uint8

const (
	KindNone    Kind = iota
	KindConnect      // an HTTP CONNECT
	KindSOCKS        // a SOCKS5 CONNECT
	KindHTTP         // a plain-HTTP request
)

var kindNames = [...]string{KindNone: "", KindConnect: "connect", KindSOCKS: "socks", KindHTTP: "http"}

// String is the kind's wire spelling ("" for KindNone).
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

func parseKind(s string) (Kind, bool) {
	for k, n := range kindNames {
		if n == s && k != int(KindNone) {
			return Kind(k), true
		}
	}
	return KindNone, false
}

// Req asks the decider about one connection or request.
type Req struct {
	ID         uint64
	Method     string
	Host       string // canonical, lower-case
	Port       int
	HostHeader *string // the single Host header, nil when absent
	SNI        *string // TLS server name, terminated TLS only
	Path       string  // the request-target up to '?', as spelled
	Query      *string // what follows the first '?', nil when empty
	Headers    Headers // without host; nil when none
	Kind       Kind    // srt.v1; KindNone otherwise
	User       string  // srt.v1: the username the client authenticated with; "" when none (srt-proxy alone) and without srt.v1
}

// Body carries up to need_body's max bytes of a request's body.
type Body struct {
	ID   uint64
	Data []byte
	Cut  bool // the body went on past Data
}

// Sync (srt.v1) asks the decider to tell srt, over srt's control channel,
// once it has handled every message the proxy sent before it (so the
// violations of refusals the proxy told it about have all gone to srt).
// The decider answers nothing on the proxy stream. ID is srt's.
type Sync struct {
	ID uint64
}

// Refused (srt.v1) tells the decider the proxy turned request ID down after
// an allow.
type Refused struct {
	ID     uint64
	Reason string
}

// Allow lets request ID through, with optional header edits and credential.
type Allow struct {
	ID            uint64
	SetHeaders    Headers
	RemoveHeaders []string
	Cred          *string // credential class; with Credential or not at all
	Credential    *string
	// Inject (srt.mask.v1) names the masks (Mask.ID, each given earlier
	// in a Masks message) the proxy puts back in this request: their
	// sentinels become their values in its headers and body, and a
	// request signed with a masked AWS access key id is signed again with
	// the real key. nil when none.
	Inject []string
}

// Masks (srt.mask.v1, decider → proxy) gives the proxy masked secrets. A
// mask's ID is unique for the link's life; an allow names the ones that
// apply to its request (Allow.Inject).
//
// A Masks message either gives masks or drops them (Drop: the ids of live
// masks the proxy forgets, when their command ended): exactly one of the
// two is non-nil, and it is not empty.
type Masks struct {
	Masks []Mask
	Drop  []string
}

// Mask is one masked secret: the sandboxed client holds Sentinel, the
// proxy alone holds Value.
type Mask struct {
	ID       string   // 1–64 bytes of [A-Za-z0-9._-]
	Sentinel string   // what the client sends in the secret's place
	Value    string   // the secret
	AWS      *AWSRole // nil unless the secret is part of an AWS key pair
}

// AWSRole places a mask in an AWS credential set (credentials.awsPairs):
// requests signed (SigV4) with a pair's masked access key id are signed
// again with its real key, secret and session token.
type AWSRole struct {
	Pair string // names the pair; the masks of one pair share it
	Role string // AWSAccessKeyID, AWSSecretAccessKey or AWSSessionToken
}

// The roles of an AWSRole.
const (
	AWSAccessKeyID     = "accessKeyId"
	AWSSecretAccessKey = "secretAccessKey"
	AWSSessionToken    = "sessionToken"
)

// Deny refuses request ID with Status (400–599).
type Deny struct {
	ID     uint64
	Status int
	Reason *string
}

// NeedBody asks for up to Max bytes of request ID's body.
type NeedBody struct {
	ID  uint64
	Max int
}

// Update (srt.v1) replaces the lists of the decider's hello.
type Update struct {
	AllowedDomains          []string // required; Encode writes nil as []
	DeniedDomains           []string // required; Encode writes nil as []
	DeniedResolvedAddresses []string // nil when none
}

// Headers maps lower-case header names to their values, in order: a req's
// headers in arrival order (names in order of first arrival), or an allow's
// setHeaders. Names are unique.
type Headers []Header

// Header is one name of Headers with all its values.
type Header struct {
	Name   string
	Values []string
}

// Get returns the values of name, or nil.
func (h Headers) Get(name string) []string {
	for _, f := range h {
		if f.Name == name {
			return f.Values
		}
	}
	return nil
}

func (*ProxyHello) Type() string   { return TypeHello }
func (*DeciderHello) Type() string { return TypeHello }
func (*Req) Type() string          { return TypeReq }
func (*Body) Type() string         { return TypeBody }
func (*Refused) Type() string      { return TypeRefused }
func (*Sync) Type() string         { return TypeSync }
func (*Allow) Type() string        { return TypeVerdict }
func (*Deny) Type() string         { return TypeVerdict }
func (*NeedBody) Type() string     { return TypeVerdict }
func (*Update) Type() string       { return TypeUpdate }
func (*Masks) Type() string        { return TypeMasks }

func (*ProxyHello) message()   {}
func (*DeciderHello) message() {}
func (*Req) message()          {}
func (*Body) message()         {}
func (*Refused) message()      {}
func (*Sync) message()         {}
func (*Allow) message()        {}
func (*Deny) message()         {}
func (*NeedBody) message()     {}
func (*Update) message()       {}
func (*Masks) message()        {}

func (a *Allow) RequestID() uint64    { return a.ID }
func (d *Deny) RequestID() uint64     { return d.ID }
func (n *NeedBody) RequestID() uint64 { return n.ID }
func (*Allow) Action() string         { return ActionAllow }
func (*Deny) Action() string          { return ActionDeny }
func (*NeedBody) Action() string      { return ActionNeedBody }

// RequestID is the id of the request the message is about.
func (r *Req) RequestID() uint64     { return r.ID }
func (b *Body) RequestID() uint64    { return b.ID }
func (r *Refused) RequestID() uint64 { return r.ID }
func (s *Sync) RequestID() uint64    { return s.ID } // srt's sync id, not a request's
