// Package sigv4 signs again, with the real key, an AWS request the
// sandboxed client signed with a masked access key id (credential masking,
// srt.mask.v1; docs/credentials.md, "AWS").
//
// The client holds a sentinel in place of each of the pair's secrets: it
// signs with the fake key id, the fake secret and the fake session token.
// For a request signed in its Authorization header (AWS4-HMAC-SHA256,
// Credential=<key id>/<date>/<region>/<service>/aws4_request), Resign puts
// the pair's real key id, session token and a signature made with its real
// secret in their place: over the same signed headers, date, region and
// service, and the same payload hash (x-amz-content-sha256 as signed, else
// the SHA-256 of the body, which it then buffers, up to 64 MiB).
//
// The variants whose signature cannot be made again here are refused
// (Refusal), unless the setting named in the refusal lets them pass
// unchanged: streaming uploads (x-amz-content-sha256 STREAMING-…, whose
// chunks are signed in a chain from the header's signature), presigned
// requests (X-Amz-Credential in the query: the signature is in the URL the
// client was given) and SigV4A (AWS4-ECDSA-P256-SHA256: an ECDSA key
// derived from the secret). A request signed with a key id that is not
// masked is none of Resign's business.
//
// The canonical request is AWS's (docs.aws.amazon.com, "Create a signed
// AWS API request"): the path encoded again, its dot segments and empty
// segments removed, for every service but S3, whose path is signed as
// sent; the query decoded, encoded with the RFC 3986 unreserved set and
// sorted; each signed header's values trimmed, inner runs of spaces folded
// to one, and its fields joined with ','.
//
// Everything here is computation: no connection, no log. A secret is
// never put into a Refusal.
package sigv4
