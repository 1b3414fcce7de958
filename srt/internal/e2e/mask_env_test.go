//go:build linux

package e2e

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// sentinelRe is the form of a sentinel: fake_value_<uuid v4>, padded with
// [a-z0-9_-] (docs/credentials.md).
var sentinelRe = regexp.MustCompile(`^fake_value_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}[a-z0-9_-]*$`)

// secret is a fresh random value of n bytes starting with prefix, so that
// no test can find it by chance.
func secret(prefix string, n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return (prefix + hex.EncodeToString(b))[:n]
}

// checkSentinel fails unless s has a sentinel's form and is no shorter
// than the value it stands for.
func checkSentinel(t *testing.T, what, s, real string) {
	t.Helper()
	if !sentinelRe.MatchString(s) || len(s) < len(real) || len(s) < 47 {
		t.Errorf("%s is %q (%d bytes): want fake_value_<uuid> of at least %d bytes", what, s, len(s), max(len(real), 47))
	}
}

// splitPost is Python that POSTs "tok=<$TOKEN>&end" to inject.test:port
// through the sandbox's proxy in three chunks cut inside the token, each
// its own write (TLS record): the proxy must find a sentinel split across
// reads.
func splitPost(port int) string {
	return `python3 - <<'EOF'
import base64, http.client, os, ssl, urllib.parse
u = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"])
auth = "Basic " + base64.b64encode((urllib.parse.unquote(u.username) + ":" + urllib.parse.unquote(u.password)).encode()).decode()
c = http.client.HTTPSConnection(u.hostname, u.port, context=ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"]), timeout=20)
c.set_tunnel("inject.test", ` + itoa(port) + `, headers={"Proxy-Authorization": auth})
tok = os.environ["TOKEN"].encode()
c.request("POST", "/split", body=iter([b"tok=" + tok[:5], tok[5:30], tok[30:] + b"&end"]), headers={"Transfer-Encoding": "chunked"}, encode_chunked=True)
print("split status", c.getresponse().status)
EOF`
}

// TestMaskEnv: a variable in mode "mask" over TLS termination. Inside,
// the command sees a sentinel at least as long as the value; the upstream
// of an injectHosts host receives the real value in headers and in
// bodies (Content-Length whose length changes, curl's chunked, and a
// chunked body whose chunks cut the sentinel), and never in the
// request-target; a body with a Content-Encoding goes untouched; an
// allowed host outside injectHosts, and plain HTTP without
// allowPlaintextInject, receive the sentinel; with allowPlaintextInject,
// plain HTTP receives the real value. The real values are nowhere in the
// command's output, environment included.
func TestMaskEnv(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		up := startMaskUpstream(t, nil)
		token, short := secret("tok_", 64), secret("sh_", 14)
		env := []string{"TOKEN=" + token, "SHORT=" + short}
		cred := func(extra string) string {
			return `{"envVars":[{"name":"TOKEN","mode":"mask","injectHosts":["inject.test"]},{"name":"SHORT","mode":"mask","injectHosts":["inject.test"]}]` + extra + `}`
		}
		in, other, plain := up.https("inject.test"), up.https("other.test"), up.http("inject.test")
		script := strings.Join([]string{
			`echo "TOKEN=$TOKEN"`, `echo "SHORT=$SHORT"`,
			`curl -sS -H "Authorization: Bearer $TOKEN" -H "X-Short: $SHORT" --data-binary "a=$SHORT&b=$TOKEN" ` + in + `/length`,
			`printf 'a=%s&b=%s' "$SHORT" "$TOKEN" | curl -sS -H "Transfer-Encoding: chunked" --data-binary @- ` + in + `/chunked`,
			splitPost(up.port),
			`printf 'a=%s' "$TOKEN" | curl -sS -H "Content-Encoding: gzip" -H "X-Tok: $TOKEN" --data-binary @- ` + in + `/gzip`,
			`curl -sS "` + in + `/target?t=$TOKEN"`,
			`curl -sS -H "Authorization: Bearer $TOKEN" --data-binary "b=$TOKEN" ` + other + `/other`,
			`curl -sS -H "Authorization: Bearer $TOKEN" --data-binary "b=$TOKEN" ` + plain + `/plain`,
			`env`, `tr '\0' '\n' </proc/self/environ`,
		}, "\n")
		s := up.maskSettings(w, cred(""))
		r := w.withHostsBin(maskHosts, filepath.Join(bin, "srt"), env, "-s", s, "-c", script)
		expect(t, r, 0, "split status 200", "!"+token, "!"+short)
		fakeTok, fakeShort := field(r.stdout, "TOKEN"), field(r.stdout, "SHORT")
		checkSentinel(t, "$TOKEN inside", fakeTok, token)
		checkSentinel(t, "$SHORT inside", fakeShort, short)
		if len(fakeTok) != len(token) {
			t.Errorf("the sentinel of a 64-byte value is %d bytes, want 64 (as long as the value)", len(fakeTok))
		}

		got := up.request(t, "/length")
		if got.header.Get("Authorization") != "Bearer "+token || got.header.Get("X-Short") != short || got.body != "a="+short+"&b="+token || got.chunked {
			t.Errorf("/length (Content-Length body): the upstream received %+v; want the real values in both headers and the body", got)
		}
		if got = up.request(t, "/chunked"); got.body != "a="+short+"&b="+token || !got.chunked {
			t.Errorf("/chunked: the upstream received %+v; want the real values in a chunked body", got)
		}
		if got = up.request(t, "/split"); got.body != "tok="+token+"&end" {
			t.Errorf("/split (the sentinel cut across chunks): the upstream received body %q; want the real value", got.body)
		}
		if got = up.request(t, "/gzip"); got.header.Get("X-Tok") != token || got.body != "a="+fakeTok {
			t.Errorf("/gzip: the upstream received X-Tok %q, body %q; want the header injected and the body (Content-Encoding: gzip) as sent, with the sentinel", got.header.Get("X-Tok"), got.body)
		}
		if got = up.request(t, "/target"); got.target != "/target?t="+fakeTok {
			t.Errorf("/target: the upstream received the request-target %q; want the sentinel left in it", got.target)
		}
		if got = up.request(t, "/other"); got.header.Get("Authorization") != "Bearer "+fakeTok || got.body != "b="+fakeTok {
			t.Errorf("/other (allowed, not in injectHosts): the upstream received %+v; want the sentinel", got)
		}
		if got = up.request(t, "/plain"); got.scheme != "http" || got.header.Get("Authorization") != "Bearer "+fakeTok || got.body != "b="+fakeTok {
			t.Errorf("/plain (plain HTTP, no allowPlaintextInject): the upstream received %+v; want the sentinel", got)
		}

		// allowPlaintextInject: plain HTTP carries the real value.
		s = up.maskSettings(w, cred(`,"allowPlaintextInject":true`))
		r = w.withHostsBin(maskHosts, filepath.Join(bin, "srt"), env, "-s", s, "-c",
			`echo "TOKEN=$TOKEN"; curl -sS -H "Authorization: Bearer $TOKEN" --data-binary "b=$TOKEN" `+plain+`/plain2; `+
				`curl -sS -H "Authorization: Bearer $TOKEN" `+up.http("other.test")+`/other2`)
		expect(t, r, 0, "ok\nok\n", "!"+token)
		fakeTok = field(r.stdout, "TOKEN")
		checkSentinel(t, "$TOKEN inside", fakeTok, token)
		if got = up.request(t, "/plain2"); got.header.Get("Authorization") != "Bearer "+token || got.body != "b="+token {
			t.Errorf("/plain2 (plain HTTP, allowPlaintextInject): the upstream received %+v; want the real value", got)
		}
		if got = up.request(t, "/other2"); got.header.Get("Authorization") != "Bearer "+fakeTok {
			t.Errorf("/other2 (plain HTTP, allowPlaintextInject, not in injectHosts): the upstream received %+v; want the sentinel", got)
		}
	})
}

// jwt is a token of the given header and payload, with a random
// signature.
func jwt(header, payload string) string {
	sig := make([]byte, 32)
	rand.Read(sig)
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(header)) + "." + enc([]byte(payload)) + "." + enc(sig)
}

// decodeJWTPy prints the header and the payload of the token in the named
// variable, or "not a JWT".
func decodeJWTPy(name string) string {
	return `python3 -c 'import base64, os
t = os.environ["` + name + `"].split(".")
d = lambda s: base64.urlsafe_b64decode(s + "=" * (-len(s) % 4)).decode()
print("` + name + `.parts=%d" % len(t)); print("` + name + `.header=" + d(t[0])); print("` + name + `.payload=" + d(t[1]))'`
}

// TestMaskJWT: decode "jwt". Whole: the command holds a structurally
// valid fake HS256 token, and the upstream receives the real token when
// the fake one is sent. maskClaims: only the named claims are sentinels,
// the rest readable; the fake token (and a claim's sentinel alone) reach
// the upstream as the real ones. A value that is not a JWT is left as it
// is, with the reference's warning.
func TestMaskJWT(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		up := startMaskUpstream(t, nil)
		sub := secret("user-", 20)
		whole := jwt(`{"alg":"RS256","typ":"JWT","kid":"k1"}`, `{"sub":"`+sub+`","exp":1900000000}`)
		email := secret("m", 12) + "@example.com"
		claims := jwt(`{"alg":"RS256","typ":"JWT"}`, `{"sub":"`+sub+`","email":"`+email+`","name":"Alice","exp":1900000000}`)
		env := []string{"WHOLE=" + whole, "CLAIMS=" + claims, "NOTJWT=not-a-jwt-value"}
		s := up.maskSettings(w, `{"envVars":[{"name":"WHOLE","mode":"mask","decode":"jwt"},`+
			`{"name":"CLAIMS","mode":"mask","decode":"jwt","maskClaims":["sub","email"]},`+
			`{"name":"NOTJWT","mode":"mask","decode":"jwt"}]}`)
		in := up.https("inject.test")
		script := strings.Join([]string{
			`echo "WHOLE=$WHOLE"`, decodeJWTPy("WHOLE"), decodeJWTPy("CLAIMS"), `echo "NOTJWT=$NOTJWT"`,
			`curl -sS -H "Authorization: Bearer $WHOLE" ` + in + `/whole`,
			`curl -sS -H "Authorization: Bearer $CLAIMS" --data-binary "$CLAIMS" ` + in + `/claims`,
			`sub=$(python3 -c 'import base64, json, os; p = os.environ["CLAIMS"].split(".")[1]; print(json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4)))["sub"])'); curl -sS -H "X-Sub: $sub" ` + in + `/sub`,
		}, "\n")
		r := w.withHostsBin(maskHosts, filepath.Join(bin, "srt"), env, "-s", s, "-c", script)
		expect(t, r, 0, "WHOLE.parts=3", "CLAIMS.parts=3", "!"+whole, "!"+claims, "!"+sub, "!"+email,
			"NOTJWT=not-a-jwt-value\n",
			`[sandbox-runtime] WARNING: credentials.envVars entry "NOTJWT" has decode "jwt" but its value did not verify as a JWT. The variable is left UNPROTECTED (real value visible as-is inside the sandbox). Fix the config or remove the entry.`+"\n")
		if n := strings.Count(r.stderr, "WARNING"); n != 1 {
			t.Errorf("%d warnings, want 1 (NOTJWT's):\n%s", n, r)
		}
		if fake := field(r.stdout, "WHOLE"); !strings.HasSuffix(fake, ".c3J0LWZha2U") {
			t.Errorf("$WHOLE inside is %q: want a fake token signed \"srt-fake\"", fake)
		}
		if h := field(r.stdout, "WHOLE.header"); h != `{"alg":"HS256","typ":"JWT"}` {
			t.Errorf("the fake token's header is %q, want HS256", h)
		}
		var p map[string]any
		if err := json.Unmarshal([]byte(field(r.stdout, "WHOLE.payload")), &p); err != nil || len(p) != 2 || p["exp"] != float64(9999999999) || !sentinelRe.MatchString(p["sub"].(string)) {
			t.Errorf("the fake token's payload is %q (%v): want a sentinel sub and exp 9999999999", field(r.stdout, "WHOLE.payload"), err)
		}
		if got := up.request(t, "/whole"); got.header.Get("Authorization") != "Bearer "+whole {
			t.Errorf("/whole: the upstream received %q; want the real token", got.header.Get("Authorization"))
		}
		p = nil
		if err := json.Unmarshal([]byte(field(r.stdout, "CLAIMS.payload")), &p); err != nil || p["name"] != "Alice" || p["exp"] != float64(1900000000) ||
			!sentinelRe.MatchString(p["sub"].(string)) || !sentinelRe.MatchString(p["email"].(string)) {
			t.Errorf("the masked-claims payload is %q (%v): want sub and email sentinels, name and exp as they are", field(r.stdout, "CLAIMS.payload"), err)
		}
		if got := up.request(t, "/claims"); got.header.Get("Authorization") != "Bearer "+claims || got.body != claims {
			t.Errorf("/claims: the upstream received %q and body %q; want the real token", got.header.Get("Authorization"), got.body)
		}
		if got := up.request(t, "/sub"); got.header.Get("X-Sub") != sub {
			t.Errorf("/sub: the upstream received X-Sub %q; want the real claim", got.header.Get("X-Sub"))
		}
	})
}

// TestMaskExtract: extract masks group 1 of every match and leaves the
// rest; a value it does not match is left as it is with the reference's
// warning (onExtractNoMatch "warn", the default), removed ("deny"), or
// refused before anything runs ("error", its exact message). The same for
// a file.
func TestMaskExtract(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		up := startMaskUpstream(t, nil)
		pw := secret("pw", 16)
		entry := func(name, on string) string {
			return `{"name":"` + name + `","mode":"mask","extract":"://[^:]+:([^@]+)@"` + on + `}`
		}
		s := up.maskSettings(w, `{"envVars":[`+entry("DB", "")+`,`+entry("WARN", "")+`,`+entry("DENY", `,"onExtractNoMatch":"deny"`)+`]}`)
		env := []string{"DB=postgres://app:" + pw + "@db.test/x?again=://u:" + pw + "@h", "WARN=no-credentials-here", "DENY=no-credentials-here"}
		r := w.withHostsBin(maskHosts, filepath.Join(bin, "srt"), env, "-s", s, "-c",
			`echo "DB=$DB"; echo "WARN=$WARN"; echo "DENY=${DENY-unset}"; curl -sS --data-binary "$DB" `+up.https("inject.test")+`/db`)
		expect(t, r, 0, "WARN=no-credentials-here\n", "DENY=unset\n", "!"+pw,
			`[sandbox-runtime] WARNING: credentials.envVars entry "WARN" has extract pattern "://[^:]+:([^@]+)@" that matched nothing in the variable's value. The variable is left UNPROTECTED (visible as-is inside the sandbox). Fix the regex, set onExtractNoMatch to "deny" or "error", or remove the entry.`+"\n")
		if n := strings.Count(r.stderr, "WARNING"); n != 1 {
			t.Errorf("%d warnings, want 1 (WARN's; DENY's entry removes it silently):\n%s", n, r)
		}
		db := field(r.stdout, "DB")
		m := regexp.MustCompile(`^postgres://app:(fake_value_[^@]+)@db\.test/x\?again=://u:(fake_value_[^@]+)@h$`).FindStringSubmatch(db)
		if m == nil || m[1] != m[2] {
			t.Fatalf("$DB inside is %q: want both matches replaced by one sentinel, the rest as it was", db)
		}
		checkSentinel(t, "the password's sentinel", m[1], pw)
		if got := up.request(t, "/db"); got.body != env[0][len("DB="):] {
			t.Errorf("/db: the upstream received %q; want the real value", got.body)
		}

		// "error": srt refuses; the command does not run.
		s = up.maskSettings(w, `{"envVars":[`+entry("DB", `,"onExtractNoMatch":"error"`)+`]}`)
		r = w.srtEnv([]string{"DB=no-credentials-here"}, "-s", s, "-c", "touch "+w.path("ran"))
		want := `srt: credentials.envVars entry "DB": extract pattern "://[^:]+:([^@]+)@" matched nothing (onExtractNoMatch: "error"). Fix the regex, change to "warn"/"deny", or remove the entry.` + "\n"
		if r.code != 1 || withoutAnnouncement(r.stderr) != want || r.stdout != "" {
			t.Errorf("onExtractNoMatch error: got %s\nwant exit 1 and stderr %q", r, want)
		}
		if exists(w.path("ran")) {
			t.Error("the command ran")
		}

		// The same three for a file.
		if skipPart(t, "file") {
			return
		}
		file := w.write("home/proj/conf.ini", "user = app\nnothing to see\n")
		fileEntry := func(on string) string {
			return `{"files":[{"path":"` + file + `","mode":"mask","extract":"password\\s*=\\s*(\\S+)"` + on + `}]}`
		}
		r = w.srt("-s", up.maskSettings(w, fileEntry("")), "-c", "cat "+file)
		expect(t, r, 0, "user = app\nnothing to see\n",
			`[sandbox-runtime] WARNING: credentials.files entry "`+file+`" has extract pattern "password\s*=\s*(\S+)" that matched nothing in the file. The file is left UNPROTECTED (readable as-is inside the sandbox). Fix the config, set onExtractNoMatch to "deny" or "error", or remove the entry.`+"\n")
		r = w.srt("-s", up.maskSettings(w, fileEntry(`,"onExtractNoMatch":"deny"`)), "-c", "cat "+file+" 2>&1; echo cat=$?")
		expect(t, r, 0, "cat: "+file+": Permission denied\ncat=1\n", "!nothing to see", "!WARNING")
		r = w.srt("-s", up.maskSettings(w, fileEntry(`,"onExtractNoMatch":"error"`)), "-c", "touch "+w.path("ran"))
		want = `srt: credentials.files entry "` + file + `": extract pattern "password\s*=\s*(\S+)" that matched nothing (onExtractNoMatch: "error"). Fix the config, change to "warn"/"deny", or remove the entry.` + "\n"
		if r.code != 1 || withoutAnnouncement(r.stderr) != want || r.stdout != "" {
			t.Errorf("a file, onExtractNoMatch error: got %s\nwant exit 1 and stderr %q", r, want)
		}
		if exists(w.path("ran")) {
			t.Error("the command ran")
		}
	})
}
