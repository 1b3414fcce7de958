package sanitize

import (
	"testing"

	"github.com/srt-sandbox/decider/policy"
)

func TestSanitizeLine(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want string
	}{
		{"reference example", "Evil <host>\nuse good.example.org", "Evil host use good.example.org"},
		{"ask reason example", "not\tapproved <x> \u200bnow", "not approved x  now"},
		{"run of controls is one space", "a\r\n\t\x00\x7f\u0085b", "a b"},
		{"mixed invisible run", "a\u200b\u202e\u2066\ufeff\U000E0041b", "a b"},
		{"each class", "a\u00adb\u061cc\u2028d\u2029e\u2060f\u2064g\u2069h", "a b c d e f g h"},
		{"c1", "a\u0080b\u009fc", "a b c"},
		{"not invisible", "a\u00a0b\u2065c\u206ad\u2010e", "a\u00a0b\u2065c\u206ad\u2010e"},
		{"tag range edges", "a\U000DFFFFb\U000E0000c\U000E007Fd\U000E0080e", "a\U000DFFFFb c d\U000E0080e"},
		{"angle brackets removed", "<script>x</script>", "scriptx/script"},
		{"angle between controls", "a\n<\nb", "a  b"},
		{"trim", "  \n spaced \t ", "spaced"},
		{"trim unicode space", "\u3000x\u00a0", "x"},
		{"empty", "", ""},
		{"only controls", "\x00\x01\u200b", ""},
		{"invalid utf8", "a\xffb", "a\ufffdb"},
		{"plain", "host is on the deny list", "host is on the deny list"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Line(tc.in); got != tc.want {
				t.Errorf("Line(%q) = %q; want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestStatusPhrase(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want string
	}{
		{"reference example", "Evil <host>\nuse good.example.org", "Evil host use good.example.org"},
		{"default reason", policy.ReasonNotAllowed, "host is not on the allow list"},
		{"non-ascii", "déjà vu", "d?j? vu"},
		{"astral is one char", "no \U0001F600", "no ?"},
		{"empty", "", DefaultStatusPhrase},
		{"only controls", "\r\n", DefaultStatusPhrase},
		{"only brackets", "<>", DefaultStatusPhrase},
		{"header injection", "x\r\nSet-Cookie: a=b", "x Set-Cookie: a=b"},
		{"nbsp trimmed", "\u00a0", DefaultStatusPhrase},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := StatusPhrase(tc.in)
			if got != tc.want {
				t.Errorf("StatusPhrase(%q) = %q; want %q", tc.in, got, tc.want)
			}
			for i := 0; i < len(got); i++ {
				if got[i] < 0x20 || got[i] > 0x7e {
					t.Errorf("phrase byte %#x is not printable ASCII", got[i])
				}
			}
		})
	}
}
