package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
)

// rssEnv asks srt-proxy, in either mode, to say its resident set size on
// stderr every N milliseconds ("srt-proxy rss <bytes>"), the reference's
// diagnostic for watching the proxy's memory under load.
const rssEnv = "SRT_PROXY_REPORT_RSS_MS"

// maxRSSEvery bounds the interval: a day.
const maxRSSEvery = 24 * 60 * 60 * 1000

// rssEvery reads rssEnv: 0 when unset, empty or "0" (no report).
func rssEvery() (time.Duration, error) {
	v := os.Getenv(rssEnv)
	if v == "" || v == "0" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > maxRSSEvery {
		return 0, fmt.Errorf("%s needs a whole number of milliseconds from 1 to %d, or 0 for no report (got %s); unset it or fix it", rssEnv, maxRSSEvery, strconv.Quote(v))
	}
	return time.Duration(n) * time.Millisecond, nil
}

// reportRSS writes "srt-proxy rss <bytes>" on w every interval until stop.
// A reading that fails is skipped.
func reportRSS(w io.Writer, every time.Duration) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			if n, err := residentBytes(); err == nil {
				fmt.Fprintf(w, "srt-proxy rss %d\n", n)
			}
		}
	}()
	return func() { close(done) }
}

// residentBytes is the process's resident set size: the second field of
// /proc/self/statm (pages; proc(5)).
func residentBytes() (int64, error) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, err
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0, fmt.Errorf("/proc/self/statm: %q", b)
	}
	pages, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/self/statm: %w", err)
	}
	return pages * int64(os.Getpagesize()), nil
}
