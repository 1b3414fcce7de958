package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestSRTModeListsCarryIPLiterals: in srt's mode (srt.v1) the hello and
// every update carry only the lists' IP literals, all srt-proxy uses of
// them; an update of 100 000 names, which as a whole would not fit one
// message (1 MiB), used to stop the decider, and UpdateConfig with it
// (issue 14, item 14). The decider must stay, apply the update, send
// the literals and answer srt's sync. The control: without srt.v1 (the
// reference's protocol, where the hello's lists are the host gate) the
// hello carries the names too.
func TestSRTModeListsCarryIPLiterals(t *testing.T) {
	bin := deciderBin

	base := startDecider(t, bin, true)
	base.send(t, []byte(`{"t":"hello","proto":1}`))
	if line := base.read(t); !strings.Contains(line, `"allowedDomains":["example.org"]`) {
		t.Errorf("control: the base protocol's hello lost the names: %q", line)
	}

	d := startDecider(t, bin, false)
	d.send(t, []byte(`{"t":"hello","proto":1,"ext":["srt.v1"]}`))
	if line := d.read(t); !strings.Contains(line, `"allowedDomains":[]`) {
		t.Errorf("srt.v1 hello: want no names in the lists, got %q", line)
	}
	var names strings.Builder
	for i := 0; i < 100000; i++ {
		fmt.Fprintf(&names, `"h%d.example.com",`, i)
	}
	fmt.Fprintln(d.ctl, `{"t":"config","network":{"allowedDomains":[`+names.String()+`"10.1.2.3:8080","[fd00::1]"],"deniedDomains":["bad.example","192.0.2.7"]}}`)
	fmt.Fprintln(d.ctl, `{"t":"sync","q":7}`)
	if line := d.read(t); line != `{"t":"update","allowedDomains":["10.1.2.3:8080","[fd00::1]"],"deniedDomains":["192.0.2.7"]}`+"\n" {
		t.Errorf("srt.v1 update: %.300q (stderr %q)", line, d.stderr.String())
	}
	buf := make([]byte, 256)
	d.ctl.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := d.ctl.Read(buf)
	if err != nil || !strings.Contains(string(buf[:n]), `"t":"sync","q":7`) {
		t.Fatalf("no sync answer after the update: %q %v (stderr %q)", buf[:n], err, d.stderr.String())
	}
}
