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
