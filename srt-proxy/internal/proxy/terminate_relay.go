package proxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"
)

// relay writes an upstream response to the client: status, headers less
// the hop-by-hop ones and Rules.StripResponseHeaders, the body re-framed and
// streamed (each read flushed), Keep-Alive: timeout=5 while the tunnel
// stays open. keep reports whether the tunnel may carry another request;
// upstreamDone whether the response was read to its end (so the upstream
// connection can carry another).
func (x *tlsSession) relay(ex *exchange, resp *http.Response) (keep, upstreamDone bool) {
	h, rec := x.h, ex.rec
	code := resp.StatusCode
	if code < 200 || code > 999 {
		// A 101 to a request whose Upgrade was not forwarded, or worse.
		h.writeAnswer(h.s.Mode.Render(Refusal{Cause: CauseUnreachable, Kind: KindHTTP}), KindHTTP, true)
		rec.set(decisionFail, "upstream answered status "+strconv.Itoa(code))
		return false, false
	}
	h.wmu.Lock()
	h.responseSent = true
	h.wmu.Unlock()

	keep = !ex.wantsClose && !h.s.isClosing()
	noBody := ex.head.method == "HEAD" || code == 204 || code == 304
	w := h.bw
	w.WriteString("HTTP/1.1 ")
	w.WriteString(strconv.Itoa(code))
	w.WriteByte(' ')
	w.WriteString(statusPhrase(resp))
	w.WriteString("\r\n")
	named := connectionTokens(resp.Header["Connection"])
	for n := range named {
		named[foldName(n)] = true
	}
	keys := make([]string, 0, len(resp.Header))
	for k := range resp.Header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		folded := foldName(k)
		if dropResponseHeader(folded, named) || x.s.strip[folded] {
			continue
		}
		for _, v := range resp.Header[k] {
			writeField(w, k, v)
		}
	}
	chunked := false
	switch {
	case noBody:
		if cl := resp.Header["Content-Length"]; code != 204 && len(cl) > 0 {
			writeField(w, "Content-Length", cl[0])
		}
	case resp.ContentLength >= 0:
		writeField(w, "Content-Length", strconv.FormatInt(resp.ContentLength, 10))
	case ex.head.minor == 1:
		writeField(w, "Transfer-Encoding", "chunked")
		chunked = true
	default:
		keep = false // the body ends when the connection does
	}
	if keep {
		writeField(w, "Keep-Alive", keepAliveAnswer)
	} else {
		writeField(w, "Connection", "close")
	}
	w.WriteString("\r\n")
	x.tc.SetWriteDeadline(time.Now().Add(x.stall()))
	if noBody {
		return w.Flush() == nil && keep, true
	}
	if resp.ContentLength < 0 {
		// A stream: the client gets the head now, not with the first chunk.
		if err := w.Flush(); err != nil {
			rec.set(decisionFail, "relaying the response: "+err.Error())
			return false, false
		}
	}
	n, err := copyStalled(w, x.tc, x.bulk, resp.Body, ex.upstream(x), resp.ContentLength > 0, chunked, x.stall())
	rec.down = n
	if err != nil {
		rec.set(decisionFail, "relaying the response: "+err.Error())
		return false, false
	}
	return keep && (resp.ContentLength < 0 || n == resp.ContentLength), true
}

// upstream is the connection the response is read from.
func (ex *exchange) upstream(x *tlsSession) net.Conn {
	if x.upc == nil {
		return nil
	}
	return x.upc.tc
}

// copyStalled copies a response body to the client as copyBody does (each
// read flushed, so streamed responses stream), but gives every read from
// src and every write to the client d to make progress: a transfer that
// stalls longer is cut.
//
// With gather (a body of known length read through TLS from src, not
// re-chunked), each read is followed by the records already at hand, and
// all of it goes to the client in one write through out.
func copyStalled(w *bufio.Writer, client net.Conn, out *bulkConn, r io.Reader, src net.Conn, gather bool, chunked bool, d time.Duration) (int64, error) {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	var total int64
	gather = gather && src != nil && out != nil && !chunked
	for {
		if src != nil {
			src.SetReadDeadline(time.Now().Add(d))
		}
		n, err := r.Read(buf)
		if n > 0 {
			client.SetWriteDeadline(time.Now().Add(d))
			var werr error
			switch {
			case gather && err == nil:
				var more int
				more, err, werr = relayAtHand(w, out, r, src, buf, n)
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
	client.SetWriteDeadline(time.Now().Add(d))
	return total, w.Flush()
}

// relayAtHand writes buf[:n] and what r can give without waiting (about
// gatherLimit in all) to the client in one write: out gathers the TLS records,
// and reads run with an expired deadline on src, so they return what TLS
// and the bulkConn under it hold, or a timeout at once. It returns the
// bytes read beyond n, the read error (not the timeout) and the write
// error.
func relayAtHand(w *bufio.Writer, out *bulkConn, r io.Reader, src net.Conn, buf []byte, n int) (more int, rerr, werr error) {
	out.gather()
	w.Write(buf[:n])
	src.SetReadDeadline(time.Unix(1, 0))
	for n+more < gatherLimit {
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
	if ferr := out.flush(); werr == nil {
		werr = ferr
	}
	return more, rerr, werr
}

// stallReader gives each read from a connection d to make progress, until
// abort.
type stallReader struct {
	r io.Reader
	c net.Conn
	d time.Duration

	mu      sync.Mutex // orders abort's deadline after every Read's
	aborted bool
}

func (s *stallReader) Read(p []byte) (int, error) {
	s.mu.Lock()
	if s.aborted {
		s.mu.Unlock()
		return 0, errAborted
	}
	s.c.SetReadDeadline(time.Now().Add(s.d))
	s.mu.Unlock()
	return s.r.Read(p)
}

// abort makes a Read in progress, and every later one, fail soon.
func (s *stallReader) abort() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.aborted = true
	s.c.SetReadDeadline(time.Unix(1, 0))
}

// stallWriter gives each write to a connection d to make progress.
type stallWriter struct {
	w io.Writer
	c net.Conn
	d time.Duration
}

func (s *stallWriter) Write(p []byte) (int, error) {
	s.c.SetWriteDeadline(time.Now().Add(s.d))
	return s.w.Write(p)
}
