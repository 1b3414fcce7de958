package plan

import "testing"

func TestGitConfigValue(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{"[core]\n\thooksPath = .husky\n", ".husky"},
		{"[Core]\n\tHOOKSPATH=.husky", ".husky"},
		{"[core] hooksPath = inline", "inline"},
		{"[core]\n\thooksPath = \"with space/#x\" # comment\n", "with space/#x"},
		{"[core]\n\thooksPath = a ; comment\n", "a"},
		{"[core]\n\thooksPath = first\n[user]\n\thooksPath = no\n[core]\n\thooksPath = last\n", "last"},
		{"[core \"sub\"]\n\thooksPath = sub\n", "sub"}, // git has no core subsections; read as core
		{"[user]\n\thooksPath = no\n", ""},
		{"[core]\n\thooksPathx = no\n", ""},
		{"[core]\n\thooksPath = \"esc\\\"aped\\\\\"\n", "esc\"aped\\"},
		{"", ""},
	} {
		if got := gitConfigValue(c.data, "core", "hookspath"); got != c.want {
			t.Errorf("gitConfigValue(%q) = %q, want %q", c.data, got, c.want)
		}
	}
}
