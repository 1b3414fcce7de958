package forward

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/bulk"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/pool"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
)

// relay writes an upstream response (read from u) to the client: its
// status, its headers without the hop-by-hop ones and
// Rules.StripResponseHeaders, its body re-framed (Content-Length when
// known, else chunked for HTTP/1.1 clients, else delimited by close) and
// streamed: every read is flushed, so streamed responses stream. A
// kept-alive response carries the connection's Keep-Alive answer, if it
// has one. keep reports whether the client connection may carry another
// request; upstreamDone whether the response was read to its end (so u
// can carry another).
func (h *Conn) relay(ex *Exchange, resp *http.Response, u *pool.Conn) (keep, upstreamDone bool) {
	rec := ex.Rec
	code := resp.StatusCode
	if code < 200 || code > 999 {
		// A 101 to a request whose Upgrade was not forwarded, or worse.
		why := "upstream " + net.JoinHostPort(ex.Req.Host, strconv.Itoa(ex.Req.Port)) + ": failed (it answered status " + strconv.Itoa(code) + ", which is not relayed)"
		h.WriteAnswer(h.Env.Mode.Render(refusal.Refusal{Cause: refusal.CauseUnreachable, Kind: ask.KindHTTP, Failure: refusal.UpstreamFailed, Reason: why}), ask.KindHTTP, true)
		rec.Set(serve.Fail, "upstream answered status "+strconv.Itoa(code))
		return false, false
	}
	h.wmu.Lock()
	h.responseSent = true
	h.wmu.Unlock()

	keep = !ex.WantsClose && !h.Env.Closing()
	noBody := ex.Head.Method == "HEAD" || code == 204 || code == 304
	w := h.BW
	w.WriteString("HTTP/1.1 ")
	w.WriteString(strconv.Itoa(code))
	w.WriteByte(' ')
	w.WriteString(statusPhrase(resp))
	w.WriteString("\r\n")
	named := http1.ConnectionTokens(resp.Header["Connection"])
	keys := make([]string, 0, len(resp.Header))
	for k := range resp.Header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		folded := http1.FoldName(k)
		if http1.DropResponseHeader(folded, named) || h.Env.Strip[folded] {
			continue
		}
		for _, v := range resp.Header[k] {
			writeField(w, k, v)
		}
	}
	chunked := false
	switch {
	case noBody:
		// A HEAD or 304 answer may state the length of what it did not send.
		if cl := resp.Header["Content-Length"]; code != 204 && len(cl) > 0 {
			writeField(w, "Content-Length", cl[0])
		}
	case resp.ContentLength >= 0:
		writeField(w, "Content-Length", strconv.FormatInt(resp.ContentLength, 10))
	case ex.Head.Minor == 1:
		writeField(w, "Transfer-Encoding", "chunked")
		chunked = true
	default:
		keep = false // the body ends when the connection does
	}
	switch {
	case !keep:
		writeField(w, "Connection", "close")
	case h.KeepAlive != "":
		writeField(w, "Keep-Alive", h.KeepAlive)
	}
	w.WriteString("\r\n")
	h.armWrite()
	if noBody {
		return w.Flush() == nil && keep, true
	}
	if resp.ContentLength < 0 {
		// A stream (server-sent events, a long poll): the client gets the
		// head now, not with the first chunk. A body of known length goes
		// out with the head in one write.
		if err := w.Flush(); err != nil {
			rec.Set(serve.Fail, "relaying the response: "+err.Error())
			return false, false
		}
	}
	n, err := h.copyBody(resp.Body, u.Net, resp.ContentLength > 0, chunked)
	rec.Down = n
	if err != nil {
		rec.Set(serve.Fail, "relaying the response: "+err.Error())
		return false, false
	}
	return keep && (resp.ContentLength < 0 || n == resp.ContentLength), true
}

// statusPhrase is the upstream's reason phrase, or the standard one.
func statusPhrase(resp *http.Response) string {
	if p, ok := strings.CutPrefix(resp.Status, strconv.Itoa(resp.StatusCode)+" "); ok && p != "" && reasonPhrase(p) {
		return p
	}
	if p := http.StatusText(resp.StatusCode); p != "" {
		return p
	}
	return "Unknown"
}

// reasonPhrase reports whether p is a valid reason-phrase (RFC 9112
// §4: HTAB, SP, VCHAR, obs-text): a control byte, a bare CR above all, is
// not relayed.
func reasonPhrase(p string) bool {
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

func writeField(w *bufio.Writer, name, value string) {
	w.WriteString(name)
	w.WriteString(": ")
	w.WriteString(value)
	w.WriteString("\r\n")
}

// armWrite gives the next write to the client the connection's stall
// limit, if it has one.
func (h *Conn) armWrite() {
	if h.Stall > 0 {
		h.Client.Raw.SetWriteDeadline(time.Now().Add(h.Stall))
	}
}

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// copyBody copies a response body from r (read from the connection src)
// to the client, as chunks when chunked, flushing after every read, so
// streamed responses stream. With a stall limit every read and every
// write has that long to make progress: a transfer that stalls longer is
// cut.
//
// With gather (a body of known length, read through TLS from src, to a
// client behind a bulk.Conn), each read is followed by the records already
// at hand, and all of it goes to the client in one write.
func (h *Conn) copyBody(r io.Reader, src net.Conn, gather, chunked bool) (int64, error) {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	w, d := h.BW, h.Stall
	var total int64
	gather = gather && src != nil && h.Bulk != nil && !chunked
	for {
		if d > 0 {
			src.SetReadDeadline(time.Now().Add(d))
		}
		n, err := r.Read(buf)
		if n > 0 {
			h.armWrite()
			var werr error
			switch {
			case gather && err == nil:
				var more int
				more, err, werr = relayAtHand(w, h.Bulk, r, src, buf, n)
				n += more
			case chunked:
				w.WriteString(strconv.FormatInt(int64(n), 16))
				w.WriteString("\r\n")
				w.Write(buf[:n])
				w.WriteString("\r\n")
				werr = w.Flush()
			default:
				w.Write(buf[:n])
				werr = w.Flush()
			}
			if werr != nil {
				return total, werr
			}
			total += int64(n)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return total, err
		}
	}
	if chunked {
		w.WriteString("0\r\n\r\n")
	}
	h.armWrite()
	return total, w.Flush()
}

// relayAtHand writes buf[:n] and what r can give without waiting (about
// bulk.GatherLimit in all) to the client in one write: out gathers the TLS
// records, and reads run with an expired deadline on src, so they return
// what TLS and the bulk.Conn under it hold, or a timeout at once. It
// returns the bytes read beyond n, the read error (not the timeout) and
// the write error.
func relayAtHand(w *bufio.Writer, out *bulk.Conn, r io.Reader, src net.Conn, buf []byte, n int) (more int, rerr, werr error) {
	out.Gather()
	w.Write(buf[:n])
	src.SetReadDeadline(time.Unix(1, 0))
	for n+more < bulk.GatherLimit {
		m, err := r.Read(buf)
		if m > 0 {
			w.Write(buf[:m])
			more += m
		}
		if err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				rerr = err
			}
			break
		}
	}
	werr = w.Flush()
	if ferr := out.Flush(); werr == nil {
		werr = ferr
	}
	return more, rerr, werr
}
