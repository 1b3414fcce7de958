package credmask

import (
	"bytes"
	"io"
	"testing"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
)

var benchMasks = []ask.Mask{
	{ID: "a", Sentinel: sentA, Value: "ghp_0123456789abcdefghijklmnopqrstuvwxyz"},
	{ID: "b", Sentinel: "fake_value_9b1e4c3a-7d2f-4e8a-b6c5-1a2b3c4d5e6f", Value: "xoxb-secret"},
}

// BenchmarkReader: a body of 1 MiB read through a Reader of two masks,
// as the proxy streams it: without a sentinel; with "fake_value_" (the
// first bytes of every srt sentinel, which cost whole comparisons) every
// 35 bytes; with a sentinel every 4 KiB.
func BenchmarkReader(b *testing.B) {
	s, _ := New(benchMasks)
	for name, line := range map[string]string{
		"plain":     `{"key": "0123456789abcdefghijklmnopqrstuvwxyz", "n": 12345678}` + "\n",
		"nearmiss":  `0123456789abcdef{"k": "fake_value"}` + "\n",
		"sentinels": string(bytes.Repeat([]byte("x"), 4096-len(sentA))) + sentA,
	} {
		body := bytes.Repeat([]byte(line), 1<<20/len(line))
		buf := make([]byte, 32<<10)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				r := s.NewReader(bytes.NewReader(body))
				if _, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{r}, buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReplace: the header values of a typical request, one with a
// sentinel.
func BenchmarkReplace(b *testing.B) {
	s, _ := New(benchMasks)
	values := []string{"Bearer " + sentA, "application/json", "curl/8.5.0", "*/*", "gzip, deflate"}
	for b.Loop() {
		for _, v := range values {
			_ = s.Replace(v)
		}
	}
}
