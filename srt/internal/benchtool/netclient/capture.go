package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/srt-sandbox/srt/internal/benchtool/dnsmsg"
)

// conns times n new connections to the echo server at target, one after
// the other: the dial (through a CONNECT tunnel when proxyEnv is set), one
// byte there and back, then the close, which is not timed.
func conns(target string, n, warm int, proxyEnv string) error {
	if target == "" || n < 1 || warm < 0 {
		return errors.New("conns needs -target and -n >= 1")
	}
	dial, auth := target, ""
	if proxyEnv != "" {
		var err error
		if dial, auth, err = proxyOf(proxyEnv); err != nil {
			return err
		}
	}
	one := func() (time.Duration, error) {
		t := time.Now()
		c, err := net.Dial("tcp", dial)
		if err != nil {
			return 0, err
		}
		defer c.Close()
		c.SetDeadline(t.Add(10 * time.Second))
		br := bufio.NewReader(c)
		if proxyEnv != "" {
			if err := connect(c, br, target, auth); err != nil {
				return 0, err
			}
		}
		if _, err := c.Write([]byte{'x'}); err != nil {
			return 0, err
		}
		if b, err := br.ReadByte(); err != nil || b != 'x' {
			return 0, fmt.Errorf("the echo: %q, %v", b, err)
		}
		return time.Since(t), nil
	}
	ds := make([]time.Duration, 0, n)
	for i := 0; i < warm+n; i++ {
		d, err := one()
		if err != nil {
			return fmt.Errorf("connection %d: %w", i+1, err)
		}
		if i >= warm {
			ds = append(ds, d)
		}
	}
	b, _ := json.Marshal(summarize(ds))
	fmt.Println(string(b))
	return nil
}

// dnsResult is what the dns mode prints: the one-at-a-time latencies,
// then the rate with inflight queries outstanding.
type dnsResult struct {
	result
	Inflight int     `json:"inflight"`
	Answers  int     `json:"answers"`
	Lost     int     `json:"lost"`
	Seconds  float64 `json:"seconds"`
	Rate     float64 `json:"rate"`
}

// dns asks the name server at server for the A records of names
// n0…n<names-1>.bench.example.com in turn, checking every answer.
func dns(server string, n, warm, names, inflight int, dur time.Duration) error {
	if n < 1 || warm < 0 || names < 1 || inflight < 1 || dur <= 0 {
		return errors.New("dns needs -n, -names and -inflight >= 1 and a -duration")
	}
	queries := make([][]byte, names)
	for i := range queries {
		var err error
		if queries[i], err = dnsmsg.Query(0, fmt.Sprintf("n%d.bench.example.com", i)); err != nil {
			return err
		}
	}
	// asker sends queries on its own socket; a lost query or answer is
	// errLost once wait has passed.
	type asker struct {
		c   net.Conn
		id  uint16
		q   []byte
		buf []byte
	}
	errLost := errors.New("no answer")
	newAsker := func() (*asker, error) {
		c, err := net.Dial("udp", server)
		return &asker{c: c, buf: make([]byte, 1500)}, err
	}
	ask := func(a *asker, i int, wait time.Duration) error {
		a.id++
		a.q = append(a.q[:0], queries[i%names]...)
		binary.BigEndian.PutUint16(a.q, a.id)
		deadline := time.Now().Add(wait)
		a.c.SetDeadline(deadline)
		if _, err := a.c.Write(a.q); err != nil {
			return err
		}
		for {
			m, err := a.c.Read(a.buf)
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return errLost
			}
			if err != nil {
				return err
			}
			if m >= 2 && binary.BigEndian.Uint16(a.buf) != a.id {
				continue // a late answer to a query counted lost
			}
			_, err = dnsmsg.CheckAnswer(a.buf[:m], a.id)
			return err
		}
	}

	a, err := newAsker()
	if err != nil {
		return err
	}
	defer a.c.Close()
	ds := make([]time.Duration, 0, n)
	for i := 0; i < warm+n; i++ {
		t := time.Now()
		if err := ask(a, i, 5*time.Second); err != nil {
			return fmt.Errorf("query %d (one at a time): %w", i+1, err)
		}
		if i >= warm {
			ds = append(ds, time.Since(t))
		}
	}
	out := dnsResult{result: summarize(ds), Inflight: inflight}

	askers := make([]*asker, inflight)
	for k := range askers {
		if askers[k], err = newAsker(); err != nil {
			return err
		}
		defer askers[k].c.Close()
	}
	answers, lost, errs := make([]int, inflight), make([]int, inflight), make([]error, inflight)
	start := time.Now()
	end := start.Add(dur)
	var wg sync.WaitGroup
	for k, a := range askers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := k; time.Now().Before(end); i += inflight {
				switch err := ask(a, i, 200*time.Millisecond); {
				case err == nil:
					answers[k]++
				case errors.Is(err, errLost):
					lost[k]++
				default:
					errs[k] = fmt.Errorf("query (%d in flight): %w", inflight, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	out.Seconds = time.Since(start).Seconds()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for k := range askers {
		out.Answers += answers[k]
		out.Lost += lost[k]
	}
	out.Rate = float64(out.Answers) / out.Seconds
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
	return nil
}
