package initstage

import (
	"reflect"
	"strconv"
	"testing"
)

// The control stream is parsed the same whatever the read boundaries: a
// CtlConnect's port may arrive split over reads.
func TestControlFeedSplits(t *testing.T) {
	stream := []byte{15, CtlConnect, 0x1f, 0x90, 2, CtlNetworkReady, CtlConnect, 0, 80, 9}
	want := []string{"sig 15", "connect 8080", "sig 2", "ready", "connect 80", "sig 9"}
	for cut1 := 0; cut1 <= len(stream); cut1++ {
		for cut2 := cut1; cut2 <= len(stream); cut2++ {
			var got []string
			var c control
			for _, part := range [][]byte{stream[:cut1], stream[cut1:cut2], stream[cut2:]} {
				c.feed(part,
					func(b byte) { got = append(got, "sig "+strconv.Itoa(int(b))) },
					func() { got = append(got, "ready") },
					func(p uint16) { got = append(got, "connect "+strconv.Itoa(int(p))) })
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("cuts %d,%d: got %q, want %q", cut1, cut2, got, want)
			}
		}
	}
}

// loopbackListeners reads the listening sockets bound to a loopback
// address or to every address, IPv4, IPv6 and IPv4-mapped, and nothing
// else (connected sockets, other addresses).
func TestLoopbackListeners(t *testing.T) {
	tcp := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0
   1: 00000000:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2 1 0 100 0 0 10 0
   2: 0200007F:0051 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 3 1 0 100 0 0 10 0
   3: 0100000A:0052 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4 1 0 100 0 0 10 0
   4: 0100007F:0053 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 5 1 0 100 0 0 10 0
`
	tcp6 := `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:0BB8 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 6 1 0 100 0 0 10 0
   1: 00000000000000000000000000000000:0BB9 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 7 1 0 100 0 0 10 0
   2: 0000000000000000FFFF00000100007F:0BBA 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 8 1 0 100 0 0 10 0
   3: 0000000000000000FFFF00000100000A:0BBB 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 9 1 0 100 0 0 10 0
   4: 0000000000000000000000000000FEFF:0BBC 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 9 1 0 100 0 0 10 0
`
	if got, want := loopbackListeners([]byte(tcp)), []uint16{8080, 80, 81}; !reflect.DeepEqual(got, want) {
		t.Fatalf("tcp: got %v, want %v", got, want)
	}
	if got, want := loopbackListeners([]byte(tcp6)), []uint16{3000, 3001, 3002}; !reflect.DeepEqual(got, want) {
		t.Fatalf("tcp6: got %v, want %v", got, want)
	}
}

// FuzzLoopbackListeners: any table reads without a panic, and every port
// read is one the table spells in a LISTEN line.
func FuzzLoopbackListeners(f *testing.F) {
	f.Add([]byte("  sl  local_address\n   0: 0100007F:1F90 00000000:0000 0A 0\n"))
	f.Add([]byte("\n\n x: :: 0A"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, p := range loopbackListeners(b) {
			if p == 0 {
				t.Fatal("port 0 reported")
			}
		}
	})
}
