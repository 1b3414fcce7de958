package proxy

import (
	"bufio"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// relay writes an upstream response to the client: its status, its
// headers without the hop-by-hop ones and Rules.StripResponseHeaders, its
// body re-framed (Content-Length when known, else chunked for HTTP/1.1
// clients, else delimited by close).
// Every chunk of body is flushed as it arrives, so streamed responses
// stream. It reports whether the connection may carry another request.
func (h *httpConn) relay(head *requestHead, resp *http.Response, rec *record, wantsClose bool) bool {
	defer resp.Body.Close()
	code := resp.StatusCode
	if code < 200 || code > 999 {
		// A 101 to a request whose Upgrade was not forwarded, or worse.
		h.writeAnswer(h.s.Mode.Render(Refusal{Cause: CauseUnreachable, Kind: KindHTTP}), KindHTTP, true)
		rec.set(decisionFail, "upstream answered status "+strconv.Itoa(code))
		return false
	}
	h.wmu.Lock()
	h.responseSent = true
	h.wmu.Unlock()

	keep := !wantsClose && !h.s.isClosing()
	noBody := head.method == "HEAD" || code == 204 || code == 304
	w := h.bw
	w.WriteString("HTTP/1.1 ")
	w.WriteString(strconv.Itoa(code))
	w.WriteByte(' ')
	w.WriteString(statusPhrase(resp))
	w.WriteString("\r\n")
	named := connectionTokens(resp.Header["Connection"])
	keys := make([]string, 0, len(resp.Header))
	for k := range resp.Header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if dropResponseHeader(lowerASCII(k), named) || h.s.strips(k) {
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
	case head.minor == 1:
		writeField(w, "Transfer-Encoding", "chunked")
		chunked = true
	default:
		keep = false // the body ends when the connection does
	}
	if !keep {
		writeField(w, "Connection", "close")
	}
	w.WriteString("\r\n")
	if noBody {
		return w.Flush() == nil && keep
	}
	if resp.ContentLength < 0 {
		// A stream (server-sent events, a long poll): the client gets the
		// head now, not with the first chunk. A body of known length goes
		// out with the head in one write.
		if err := w.Flush(); err != nil {
			rec.set(decisionFail, "relaying the response: "+err.Error())
			return false
		}
	}
	n, err := copyBody(w, resp.Body, chunked)
	rec.down = n
	if err != nil {
		rec.set(decisionFail, "relaying the response: "+err.Error())
		return false
	}
	return keep && (resp.ContentLength < 0 || n == resp.ContentLength)
}

// statusPhrase is the upstream's reason phrase, or the standard one.
func statusPhrase(resp *http.Response) string {
	if p, ok := strings.CutPrefix(resp.Status, strconv.Itoa(resp.StatusCode)+" "); ok && p != "" {
		return p
	}
	if p := http.StatusText(resp.StatusCode); p != "" {
		return p
	}
	return "Unknown"
}

func writeField(w *bufio.Writer, name, value string) {
	w.WriteString(name)
	w.WriteString(": ")
	w.WriteString(value)
	w.WriteString("\r\n")
}

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// copyBody copies a response body to the client, as chunks when chunked,
// flushing after every read.
func copyBody(w *bufio.Writer, r io.Reader, chunked bool) (int64, error) {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	var total int64
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if chunked {
				w.WriteString(strconv.FormatInt(int64(n), 16))
				w.WriteString("\r\n")
			}
			w.Write(buf[:n])
			if chunked {
				w.WriteString("\r\n")
			}
			if ferr := w.Flush(); ferr != nil {
				return total, ferr
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
	return total, w.Flush()
}
