package credmask

import (
	"encoding/base64"
	"regexp"
	"strings"
	"testing"

	"github.com/srt-sandbox/srt/settings"
)

var sentinelRE = regexp.MustCompile(`^fake_value_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}[a-z0-9_-]*$`)

func TestSentinel(t *testing.T) {
	for _, n := range []int{0, 1, 47, 48, 200} {
		s := Sentinel(n)
		if !sentinelRE.MatchString(s) || len(s) != max(n, 47) {
			t.Errorf("Sentinel(%d) = %q", n, s)
		}
	}
}

const jwt = "eyJhbGciOiAiUlMyNTYiLCAidHlwIjogIkpXVCJ9.eyJzdWIiOiAidXNlcjEyMyIsICJlbWFpbCI6ICJhQGIuYyIsICJuIjogNSwgImV4cCI6IDIwMDAwMDAwMDB9.c2lnbmF0dXJl"

func payload(t *testing.T, tok string) string {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[1])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestEnv(t *testing.T) {
	real := "secret-" + strings.Repeat("x", 60)
	out, err := Env(settings.CredentialEnv{Name: "T", Mode: "mask"}, real)
	if err != nil || !sentinelRE.MatchString(out.Text) || len(out.Text) != len(real) || len(out.Secrets) != 1 || out.Secrets[0].Value != real || out.Secrets[0].Sentinel != out.Text {
		t.Fatalf("whole: %+v %v", out, err)
	}
	out, _ = Env(settings.CredentialEnv{Name: "T", Mode: "mask", Extract: `t=(\S+)`}, "a t=one b t=two c t=one")
	if len(out.Secrets) != 2 || strings.Contains(out.Text, "one") || strings.Contains(out.Text, "two") || !strings.HasPrefix(out.Text, "a t=fake_value_") {
		t.Fatalf("extract: %+v", out)
	}
	out, _ = Env(settings.CredentialEnv{Name: "T", Mode: "mask", Extract: `t=(\S+)`}, "none")
	if out.Text != "none" || !strings.HasPrefix(out.Warning, `[sandbox-runtime] WARNING: credentials.envVars entry "T" has extract pattern "t=(\S+)" that matched nothing`) {
		t.Fatalf("warn: %+v", out)
	}
	out, _ = Env(settings.CredentialEnv{Name: "T", Mode: "mask", Extract: `t=(\S+)`, OnExtractNoMatch: "deny"}, "none")
	if !out.Unset {
		t.Fatalf("deny: %+v", out)
	}
	if _, err := Env(settings.CredentialEnv{Name: "T", Mode: "mask", Extract: `t=(\S+)`, OnExtractNoMatch: "error"}, "none"); err == nil || strings.Contains(err.Error(), "none") {
		t.Fatalf("error: %v", err)
	}
	out, _ = Env(settings.CredentialEnv{Name: "T", Mode: "mask", Decode: "jwt"}, jwt)
	if len(out.Secrets) != 1 || out.Secrets[0].Value != jwt || out.Text != out.Secrets[0].Sentinel || !strings.HasPrefix(out.Text, "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.") {
		t.Fatalf("jwt: %+v", out)
	}
	if p := payload(t, out.Text); !regexp.MustCompile(`^\{"sub":"fake_value_[^"]+","exp":9999999999\}$`).MatchString(p) {
		t.Fatalf("jwt payload %s", p)
	}
	out, _ = Env(settings.CredentialEnv{Name: "T", Mode: "mask", Decode: "jwt", MaskClaims: []string{"sub", "n"}}, jwt)
	p := payload(t, out.Text)
	if len(out.Secrets) != 2 || out.Secrets[0].Value != "user123" || !strings.Contains(p, `"sub":"`+out.Secrets[0].Sentinel+`","email":"a@b.c","n":5,"exp":2000000000}`) || out.Secrets[1].Value != jwt {
		t.Fatalf("claims: %s %+v", p, out)
	}
	out, _ = Env(settings.CredentialEnv{Name: "T", Mode: "mask", Decode: "jwt"}, "not.a.jwt")
	if out.Text != "not.a.jwt" || !strings.Contains(out.Warning, "did not verify as a JWT") {
		t.Fatalf("non-jwt: %+v", out)
	}
}

func TestFile(t *testing.T) {
	out, _ := File(settings.CredentialFile{Path: "/f", Mode: "mask", Extract: `password=(\S+)`, MaskDuplicates: true}, "password=hunter2\nx hunter2 y\n")
	if strings.Contains(out.Text, "hunter2") || strings.Count(out.Text, out.Secrets[0].Sentinel) != 2 {
		t.Fatalf("duplicates: %q", out.Text)
	}
	out, _ = File(settings.CredentialFile{Path: "/f", Mode: "mask", Extract: `password=(\S+)`}, "password=hunter2\nx hunter2 y\n")
	if strings.Count(out.Text, "hunter2") != 1 {
		t.Fatalf("no duplicates: %q", out.Text)
	}
	out, _ = File(settings.CredentialFile{Path: "/f", Mode: "mask", Decode: "jwt"}, "token: "+jwt+"\n")
	if strings.Contains(out.Text, jwt) || len(out.Secrets) != 1 {
		t.Fatalf("file jwt: %q", out.Text)
	}
}

func FuzzMaskClaims(f *testing.F) {
	f.Add(`{"sub":"a","n":1,"x":{"y":"z"}}`, "sub")
	f.Add(`{"sub":"\u00e9\"","sub":"b"}`, "sub")
	f.Fuzz(func(t *testing.T, obj, claim string) {
		if !isJSONObject([]byte(obj)) {
			return
		}
		out, err := maskClaims([]byte(obj), []string{claim}, func(string) string { return Sentinel(0) })
		if err == nil && !isJSONObject(out) {
			t.Fatalf("%s -> %s", obj, out)
		}
	})
}
