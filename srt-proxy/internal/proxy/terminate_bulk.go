package proxy

import (
	"net"
	"sync"
)

// bulkSize is the read size of a bulkConn (16 TLS records per system call)
// and the size of its gathering buffer. Measured on loopback with 256 MiB
// through a terminated tunnel: 64 KiB gave 0.50–0.56 of an opaque
// tunnel's throughput, 256 KiB 0.61–0.62.
const bulkSize = 256 << 10

// gatherLimit is how much plaintext relayAtHand gathers for one write: the
// records (22 bytes more per 16 KiB), the response head and one more read
// (32 KiB) still fit bulkSize.
const gatherLimit = bulkSize - 64<<10

var bulkBufs = sync.Pool{New: func() any { b := make([]byte, bulkSize); return &b }}

// bulkConn is the TCP connection under one side of a terminated tunnel's
// TLS. crypto/tls reads and writes one record (at most 16 KiB) per system
// call; bulkConn reads up to bulkSize at once and serves the records from
// that, and while gathering it collects the records written into one
// write. Its buffers come from a pool and go back when drained or
// flushed, so an idle connection holds none.
type bulkConn struct {
	net.Conn

	rbuf *[]byte // bytes read ahead; nil when drained
	r, w int

	wmu       sync.Mutex
	gathering bool
	wbuf      *[]byte
}

// Read serves bytes read ahead, or reads up to bulkSize. crypto/tls calls
// it from one goroutine at a time.
func (c *bulkConn) Read(p []byte) (int, error) {
	if c.rbuf == nil {
		if len(p) >= bulkSize {
			return c.Conn.Read(p)
		}
		b := bulkBufs.Get().(*[]byte)
		n, err := c.Conn.Read(*b)
		if n <= 0 {
			bulkBufs.Put(b)
			return 0, err
		}
		// An error that came with data comes back on the next read.
		c.rbuf, c.r, c.w = b, 0, n
	}
	n := copy(p, (*c.rbuf)[c.r:c.w])
	c.r += n
	if c.r == c.w {
		bulkBufs.Put(c.rbuf)
		c.rbuf = nil
	}
	return n, nil
}

// buffered reports whether bytes read ahead wait to be served.
func (c *bulkConn) buffered() bool { return c.rbuf != nil }

// gather makes writes collect in memory until flush writes them at once:
// the records of several TLS writes in one system call.
func (c *bulkConn) gather() {
	c.wmu.Lock()
	c.gathering = true
	c.wmu.Unlock()
}

// Write writes p, or collects it while gathering.
func (c *bulkConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.gathering {
		if c.wbuf == nil {
			c.wbuf = bulkBufs.Get().(*[]byte)
			*c.wbuf = (*c.wbuf)[:0]
		}
		*c.wbuf = append(*c.wbuf, p...)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// flush writes what was gathered and stops gathering.
func (c *bulkConn) flush() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.gathering = false
	if c.wbuf == nil {
		return nil
	}
	_, err := c.Conn.Write(*c.wbuf)
	if cap(*c.wbuf) == bulkSize {
		*c.wbuf = (*c.wbuf)[:bulkSize]
		bulkBufs.Put(c.wbuf)
	}
	c.wbuf = nil
	return err
}
