package engine

import (
	"reflect"
	"strings"
	"testing"

	"github.com/srt-sandbox/decider/control"
	"github.com/srt-sandbox/decider/protocol"
	"github.com/srt-sandbox/decider/srtlink"
)

// Two commands, each with masks for its own hosts: Inject names the masks
// of the command the proxy user names whose injectHosts match the host,
// ports aside, and nothing else.
func TestInjectNamesTheRightMasks(t *testing.T) {
	e := New()
	keyA, keyB := "command-a-0123456789abcdef", "command-b-0123456789abcdef"
	if _, err := e.SetMasks(keyA, []control.Mask{
		{ID: "a.1", Sentinel: "fake_value_a1a1a1a1a1a1a1a1", Value: "gh-token", InjectHosts: []string{"api.github.com"}},
		{ID: "a.2", Sentinel: "fake_value_a2a2a2a2a2a2a2a2", Value: "wild", InjectHosts: []string{"*.example.com", "10.0.0.1"}},
	}); err != nil {
		t.Fatal(err)
	}
	pm, err := e.SetMasks(keyB, []control.Mask{
		{ID: "b.1", Sentinel: "fake_value_b1b1b1b1b1b1b1b1", Value: "AKIAREAL", InjectHosts: []string{"api.github.com", "s3.amazonaws.com"},
			AWSPair: "default", AWSRole: protocol.AWSAccessKeyID},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []protocol.Mask{{ID: "b.1", Sentinel: "fake_value_b1b1b1b1b1b1b1b1", Value: "AKIAREAL", AWS: &protocol.AWSRole{Pair: "default", Role: protocol.AWSAccessKeyID}}}
	if !reflect.DeepEqual(pm, want) {
		t.Fatalf("SetMasks = %+v", pm)
	}
	userA, userB := srtlink.UserFor(keyA), srtlink.UserFor(keyB)
	for _, c := range []struct {
		user, host string
		want       []string
	}{
		{userA, "api.github.com", []string{"a.1"}},
		{userB, "api.github.com", []string{"b.1"}},
		{userA, "s3.amazonaws.com", nil},
		{userB, "s3.amazonaws.com", []string{"b.1"}},
		{userA, "x.example.com", []string{"a.2"}},
		{userA, "a.b.example.com", []string{"a.2"}},
		{userA, "example.com", nil}, // a wildcard matches strict subdomains
		{userA, "10.0.0.1", []string{"a.2"}},
		{userA, "github.com", nil},
		{userB, "x.example.com", nil},
		{srtlink.BareUser, "api.github.com", nil},
		{"", "api.github.com", nil},
		{srtlink.UserFor("another-command-0123456789"), "api.github.com", nil},
	} {
		if got := e.Inject(c.user, c.host); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Inject(%s, %s) = %q; want %q", c.user, c.host, got, c.want)
		}
	}
	// Masks add up; a drop takes all of a command's and none of another's.
	if _, err := e.SetMasks(keyA, []control.Mask{{ID: "a.3", Sentinel: "fake_value_a3a3a3a3a3a3a3a3", Value: "v", InjectHosts: []string{"api.github.com"}}}); err != nil {
		t.Fatal(err)
	}
	if got := e.Inject(userA, "api.github.com"); !reflect.DeepEqual(got, []string{"a.1", "a.3"}) {
		t.Errorf("after a second masks: %q", got)
	}
	if ids := e.DropMasks(keyA); !reflect.DeepEqual(ids, []string{"a.1", "a.2", "a.3"}) {
		t.Errorf("DropMasks = %q", ids)
	}
	if got := e.Inject(userA, "api.github.com"); got != nil {
		t.Errorf("after the drop: %q", got)
	}
	if got := e.Inject(userB, "api.github.com"); !reflect.DeepEqual(got, []string{"b.1"}) {
		t.Errorf("the other command's after the drop: %q", got)
	}
	if ids := e.DropMasks(keyA); ids != nil {
		t.Errorf("a second drop: %q", ids)
	}
}

// Bad masks are refused whole, and the error never holds a value.
func TestSetMasksRefuses(t *testing.T) {
	const secret = "hunter2-value"
	for _, c := range []struct {
		m    control.Mask
		want string
	}{
		{control.Mask{ID: "a.1", Sentinel: "fake_value_0123456789", Value: secret}, `mask "a.1": no injectHosts`},
		{control.Mask{ID: "a.1", Sentinel: "fake_value_0123456789", Value: secret, InjectHosts: []string{"api.github.com:443"}}, `injectHosts entry "api.github.com:443"`},
		{control.Mask{ID: "a.1", Sentinel: "fake_value_0123456789", Value: secret, InjectHosts: []string{"*"}}, `injectHosts entry "*"`},
		{control.Mask{ID: "a.1", Sentinel: "fake_value_0123456789", Value: secret, InjectHosts: []string{"a.test"}, AWSPair: "p"}, "awsPair and awsRole come together"},
	} {
		e := New()
		_, err := e.SetMasks("k", []control.Mask{{ID: "ok", Sentinel: "fake_value_okokokokokok", Value: "v", InjectHosts: []string{"a.test"}}, c.m})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%+v: %v; want %q", c.m.InjectHosts, err, c.want)
		}
		if got := e.Inject(srtlink.UserFor("k"), "a.test"); got != nil {
			t.Errorf("a refused masks message kept %q", got)
		}
	}
}
