package initstage

import (
	"reflect"
	"strings"
	"testing"
)

func TestGrantsRoundTrip(t *testing.T) {
	gs := []Grant{{Path: "/a", Rights: GrantRead}, {Path: "/b c/d", Rights: GrantWrite | GrantList}}
	got, err := DecodeGrants(EncodeGrants(gs))
	if err != nil || !reflect.DeepEqual(got, gs) {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, bad := range []string{"\x01a\x00", "\x00/a\x00", "\x09/a\x00", "\x01/a"} {
		if _, err := DecodeGrants([]byte(bad)); err == nil {
			t.Errorf("%q: decoded", bad)
		}
	}
}

func TestNoNSArgsRoundTrip(t *testing.T) {
	s := Spec{NoNS: NoNS{On: true, GrantsFD: 5, Reads: true, ChainFD: 6, Net: true, ConnectPorts: []int{4000, 4001}, BindPorts: []int{8080}, ScopeSignals: true, InetTCPOnly: true}}
	got, cmd, err := parseArgs(Args(s, []string{"true"}))
	if err != nil || !reflect.DeepEqual(got.NoNS, s.NoNS) || len(cmd) != 1 {
		t.Fatalf("got %+v %v %v", got.NoNS, cmd, err)
	}
	for _, bad := range [][]string{{Flag, "-grants-fd", "2", "--", "x"}, {Flag, "-tcp-connect", "70000", "--", "x"}, {Flag, "-tcp-bind"}, {Flag, "-chains-fd", "1", "--", "x"}} {
		if _, _, err := parseArgs(bad); err == nil {
			t.Errorf("%q: parsed", bad)
		}
	}
}

func FuzzDecodeGrants(f *testing.F) {
	f.Add(EncodeGrants([]Grant{{Path: "/a", Rights: GrantRead}, {Path: "/b", Rights: GrantWrite}}))
	f.Add([]byte("\x07/\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		gs, err := DecodeGrants(data)
		if err != nil {
			return
		}
		again, err := DecodeGrants(EncodeGrants(gs))
		if err != nil || !reflect.DeepEqual(again, gs) {
			t.Fatalf("re-decoding %v: %v, %v", gs, again, err)
		}
	})
}

func TestChainsRoundTrip(t *testing.T) {
	cs := []Chain{{Path: "/w", Protected: []string{".bashrc", ".git"}}, {Path: "/w/.git", Protected: []string{"hooks"}}, {Path: "/x y"}, {Path: "/w", Protected: []string{".env"}, Reads: true}}
	got, err := DecodeChains(EncodeChains(cs))
	if err != nil || !reflect.DeepEqual(got, cs) {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, bad := range []string{"Cw\x00", "C/a/\x00", "N.git\x00", "C/a\x00Nb/c\x00", "C/a\x00N..\x00", "C/a\x00N\x00", "X/a\x00", "C/a"} {
		if _, err := DecodeChains([]byte(bad)); err == nil {
			t.Errorf("%q: decoded", bad)
		}
	}
}

func FuzzDecodeChains(f *testing.F) {
	f.Add(EncodeChains([]Chain{{Path: "/w", Protected: []string{".git"}}, {Path: "/w/.git", Protected: []string{"hooks", "config"}}}))
	f.Add([]byte("C/\x00N.\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, err := DecodeChains(data)
		if err != nil {
			return
		}
		for _, c := range cs {
			for _, n := range c.Protected {
				if n == "" || n == "." || n == ".." || strings.Contains(n, "/") {
					t.Fatalf("decoded a name that is not one component: %q", n)
				}
			}
		}
		again, err := DecodeChains(EncodeChains(cs))
		if err != nil || !reflect.DeepEqual(again, cs) {
			t.Fatalf("re-decoding %v: %v, %v", cs, again, err)
		}
	})
}
