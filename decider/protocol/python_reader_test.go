package protocol

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// testdata/strict_reader.py is a strict reader of the protocol written in
// Python from docs/decider-protocol.md alone, not from this package. It must
// answer every conformance vector as the vector says, and the boundary cases
// below (too large for the vector files) as both the document and this
// codec do: where it does not, the document is incomplete or wrong.

// pyQuery is one line to the reader: a message or a byte stream.
type pyQuery struct {
	Message *string `json:"message,omitempty"`
	Dir     string  `json:"dir,omitempty"`
	Ext     bool    `json:"ext"`
	Mask    bool    `json:"mask,omitempty"`
	Stream  *string `json:"stream,omitempty"`
	Framing string  `json:"framing,omitempty"`
	Max     int     `json:"max,omitempty"`
	Summary bool    `json:"summary,omitempty"` // no canonical form in the answer
}

func messageQuery(wire []byte, dir string, ext bool) pyQuery {
	m := b64(wire)
	return pyQuery{Message: &m, Dir: dir, Ext: ext}
}

// pyAnswer is its answer.
type pyAnswer struct {
	Error     string   `json:"error,omitempty"`
	OK        bool     `json:"ok,omitempty"`
	T         string   `json:"t,omitempty"`
	Action    string   `json:"action,omitempty"`
	ID        uint64   `json:"id,omitempty"`
	Kind      string   `json:"kind,omitempty"`
	Canonical string   `json:"canonical,omitempty"` // base64
	Frames    []string `json:"frames,omitempty"`    // base64
	End       string   `json:"end,omitempty"`
}

// runPythonReader sends every query to one run of the reader and returns
// its answers in order.
func runPythonReader(t *testing.T, queries []pyQuery) []pyAnswer {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed for this test (scripts/test installs it)")
	}
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, q := range queries {
		if err := enc.Encode(q); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(python, "testdata/strict_reader.py")
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("strict_reader.py: %v\n%s", err, stderr.Bytes())
	}
	var answers []pyAnswer
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<27)
	for sc.Scan() {
		var a pyAnswer
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("strict_reader.py answered %q: %v", sc.Bytes(), err)
		}
		answers = append(answers, a)
	}
	if len(answers) != len(queries) {
		t.Fatalf("strict_reader.py answered %d of %d queries\n%s", len(answers), len(queries), stderr.Bytes())
	}
	return answers
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func TestPythonReaderVectors(t *testing.T) {
	type msgCase struct {
		file string
		c    vectorCase
		wire []byte
	}
	var msgs []msgCase
	var queries []pyQuery
	for file, cases := range loadCases[vectorCase](t, "vectors") {
		for _, c := range cases {
			w := c.wire(t)
			msgs = append(msgs, msgCase{file, c, w})
			q := messageQuery(w, c.Dir, c.Ext)
			q.Mask = c.Mask
			queries = append(queries, q)
		}
	}
	var frames []framingCase
	for _, cases := range loadCases[framingCase](t, "framing") {
		for _, c := range cases {
			stream := []byte(nil)
			if c.Stream != nil {
				stream = []byte(*c.Stream)
			} else {
				var err error
				if stream, err = base64.StdEncoding.DecodeString(*c.StreamBase64); err != nil {
					t.Fatal(err)
				}
			}
			frames = append(frames, c)
			st := b64(stream)
			queries = append(queries, pyQuery{Stream: &st, Framing: c.Framing, Max: c.Max})
		}
	}
	answers := runPythonReader(t, queries)
	for i, m := range msgs {
		a, c := answers[i], m.c
		name := strings.TrimSuffix(m.file, ".json") + "/" + c.Name
		if c.Expect.Error != "" {
			if a.Error != c.Expect.Error {
				t.Errorf("%s: python says %s; the vector says error %q", name, pyString(a), c.Expect.Error)
			}
			continue
		}
		want := string(m.wire)
		if c.Expect.Canonical != nil {
			want = *c.Expect.Canonical
		}
		got := pyAnswer{OK: true, T: c.Expect.T, Action: c.Expect.Action, ID: c.Expect.ID, Kind: c.Expect.Kind, Canonical: b64([]byte(want))}
		if pyString(a) != pyString(got) {
			t.Errorf("%s: python says %s; the vector says %s", name, pyString(a), pyString(got))
		}
	}
	for i, c := range frames {
		a := answers[len(msgs)+i]
		var got []string
		for _, f := range a.Frames {
			b, _ := base64.StdEncoding.DecodeString(f)
			got = append(got, string(b))
		}
		if strings.Join(got, "\x00") != strings.Join(c.Expect.Frames, "\x00") || len(got) != len(c.Expect.Frames) || a.End != c.Expect.End {
			t.Errorf("framing/%s: python reads %q then %q; the vector says %q then %q", c.Name, got, a.End, c.Expect.Frames, c.Expect.End)
		}
	}
	if len(msgs) < 400 || len(frames) < 20 {
		t.Errorf("%d message and %d framing vectors; want every one", len(msgs), len(frames))
	}
}

// pyString shows an answer with its canonical form decoded.
func pyString(a pyAnswer) string {
	if a.Error != "" {
		return "error " + a.Error
	}
	c, _ := base64.StdEncoding.DecodeString(a.Canonical)
	a.Canonical = string(c)
	b, _ := json.Marshal(a)
	return string(b)
}

// dnsName is a valid list entry of n bytes (6 ≤ n ≤ 253): labels of x
// and ".com".
func dnsName(n int) string {
	var labels []string
	m := n - len(".com")
	for m > 63 {
		labels = append(labels, strings.Repeat("x", 62))
		m -= 63
	}
	labels = append(labels, strings.Repeat("x", m))
	return strings.Join(labels, ".") + ".com"
}

// boundaryCase is a message at one of the document's exact limits.
type boundaryCase struct {
	name string
	dir  string
	ext  bool
	wire []byte
	want string // "" to accept, else the reason
}

// TestPythonReaderBoundaries checks the limits the document states in
// bytes, at the limit and one past it, against the reader and this codec.
func TestPythonReaderBoundaries(t *testing.T) {
	var cases []boundaryCase
	add := func(name, dir string, ext bool, wire []byte, want string) {
		cases = append(cases, boundaryCase{name, dir, ext, wire, want})
	}
	// A decider→proxy message: 1,048,576 bytes, a hello whose last list
	// entry takes what is left.
	hello := func(size int) []byte {
		const head, tail = `{"t":"hello","proto":1,"allowedDomains":[`, `],"deniedDomains":[]}`
		var b strings.Builder
		b.WriteString(head)
		for i := 0; size-b.Len()-len(tail) > 200; i++ {
			b.WriteString(`"e` + itoa(uint64(1000000+i)) + `.example.com",`)
		}
		b.WriteString(`"` + dnsName(size-b.Len()-len(tail)-2) + `"`)
		b.WriteString(tail)
		return []byte(b.String())
	}
	add("decider-message-1MiB", "to-proxy", false, hello(MaxFrame), "")
	add("decider-message-1MiB+1", "to-proxy", false, hello(MaxFrame+1), ReasonOversized)

	// A req: 1,048,576 bytes, its query (no limit of its own) grown.
	req := func(size int, ext bool) []byte {
		head := `{"t":"req","id":1,"method":"GET","host":"example.com","port":80,"path":"/","query":"`
		tail := `"}`
		if ext {
			tail = `","kind":"http"}`
		}
		return []byte(head + strings.Repeat("q", size-len(head)-len(tail)) + tail)
	}
	add("req-1MiB", "to-decider", false, req(MaxFrame, false), "")
	add("req-1MiB+1", "to-decider", false, req(MaxFrame+1, false), ReasonOversized)
	add("req-ext-1MiB+1", "to-decider", true, req(MaxFrame+1, true), ReasonOversized)
	// A refused is not a req: the 1 MiB limit is not its own.
	refused := `{"t":"refused","id":1,"reason":"x"}` + strings.Repeat(" ", MaxFrame)
	add("refused-over-1MiB", "to-decider", true, []byte(refused), "")

	// A req's host, hostHeader, sni and path: 8192 bytes each.
	long := func(n int) string { return strings.Repeat("a", n) }
	for _, f := range []string{"hostHeader", "sni"} {
		for _, n := range []int{MaxTarget, MaxTarget + 1} {
			want := ""
			if n > MaxTarget {
				want = ReasonBadReq
			}
			add("req-"+f+"-"+itoa(uint64(n)), "to-decider", false,
				[]byte(`{"t":"req","id":1,"method":"GET","host":"example.com","port":443,"`+f+`":"`+long(n)+`","path":"/"}`), want)
		}
	}
	add("req-path-8192", "to-decider", false, []byte(`{"t":"req","id":1,"method":"GET","host":"example.com","port":80,"path":"/`+long(MaxTarget-1)+`"}`), "")
	// Multi-byte characters count in UTF-8 bytes: 4096 × "é" is 8192.
	add("req-path-8192-bytes-multibyte", "to-decider", false, []byte(`{"t":"req","id":1,"method":"GET","host":"example.com","port":80,"path":"`+strings.Repeat("é", MaxTarget/2)+`"}`), "")
	add("req-path-8194-bytes-multibyte", "to-decider", false, []byte(`{"t":"req","id":1,"method":"GET","host":"example.com","port":80,"path":"`+strings.Repeat("é", MaxTarget/2+1)+`"}`), ReasonBadReq)

	// Header maps: 65,536 bytes of names (once each) and values.
	headers := func(size int) string {
		// "x-a" with values of 1000 bytes, the last one the rest.
		name := "x-a"
		rest := size - len(name)
		var vals []string
		for rest > 0 {
			n := min(rest, 1000)
			vals = append(vals, `"`+long(n)+`"`)
			rest -= n
		}
		return `{"` + name + `":[` + strings.Join(vals, ",") + `]}`
	}
	for _, n := range []int{MaxHeaderBytes, MaxHeaderBytes + 1} {
		want, wantAllow := "", ""
		if n > MaxHeaderBytes {
			want, wantAllow = ReasonBadReq, ReasonBadVerdict
		}
		add("req-headers-"+itoa(uint64(n))+"-bytes", "to-decider", false,
			[]byte(`{"t":"req","id":1,"method":"GET","host":"example.com","port":80,"path":"/","headers":`+headers(n)+`}`), want)
		add("allow-set-headers-"+itoa(uint64(n))+"-bytes", "to-proxy", false,
			[]byte(`{"t":"verdict","id":1,"action":"allow","setHeaders":`+headers(n)+`}`), wantAllow)
	}
	// removeHeaders: 65,536 bytes of names, 190 names at most.
	remove := func(size int) string {
		var names []string
		for i := 0; size > 0; i++ {
			prefix := "x" + itoa(uint64(i)) + "-"
			n := min(size, 400)
			names = append(names, `"`+prefix+strings.Repeat("r", n-len(prefix))+`"`)
			size -= n
		}
		return "[" + strings.Join(names, ",") + "]"
	}
	add("allow-remove-65536-bytes", "to-proxy", false, []byte(`{"t":"verdict","id":1,"action":"allow","removeHeaders":`+remove(MaxRemoveBytes)+`}`), "")
	add("allow-remove-65537-bytes", "to-proxy", false, []byte(`{"t":"verdict","id":1,"action":"allow","removeHeaders":`+remove(MaxRemoveBytes+1)+`}`), ReasonBadVerdict)

	var queries []pyQuery
	for _, c := range cases {
		queries = append(queries, messageQuery(c.wire, c.dir, c.ext))
	}
	answers := runPythonReader(t, queries)
	for i, c := range cases {
		checkBoundary(t, c, answers[i])
	}

	// A body: the largest message, 44,739,299 bytes. These are built and
	// read one at a time, without the canonical form, to hold less memory.
	bodyMsg := func(id string, data int, cut bool, pad int) []byte {
		m := `{"t":"body","id":` + id + `,"data":"` + base64.StdEncoding.EncodeToString(make([]byte, data)) + `"`
		if cut {
			m += `,"cut":true`
		}
		return []byte(m + strings.Repeat(" ", pad) + "}")
	}
	for _, c := range []struct {
		name string
		wire func() []byte
		want string
	}{
		{"body-largest", func() []byte { return bodyMsg("9007199254740991", MaxBody, true, 0) }, ""},
		{"body-largest+1", func() []byte { return bodyMsg("9007199254740991", MaxBody, true, 1) }, ReasonOversized},
		{"body-data-32MiB+1", func() []byte { return bodyMsg("1", MaxBody+1, false, 0) }, ReasonBadBody},
	} {
		w := c.wire()
		if c.name == "body-largest" && len(w) != 44739299 {
			t.Fatalf("the largest body message is %d bytes; the document says 44,739,299", len(w))
		}
		q := messageQuery(w, "to-decider", false)
		q.Summary = true
		a := runPythonReader(t, []pyQuery{q})[0]
		checkBoundary(t, boundaryCase{c.name, "to-decider", false, w, c.want}, a)
	}
}

// checkBoundary compares the codec's and the reader's answers with c.want.
func checkBoundary(t *testing.T, c boundaryCase, a pyAnswer) {
	t.Helper()
	_, err := decodeFor(c.dir, c.wire, c.ext, false)
	goReason := ""
	var pe *ProtocolError
	if errors.As(err, &pe) {
		goReason = pe.Reason
	} else if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	if goReason != c.want {
		t.Errorf("%s: the codec says %q; want %q", c.name, goReason, c.want)
	}
	if a.Error != c.want || a.OK == (c.want != "") {
		t.Errorf("%s: python says %q; want %q", c.name, a.Error, c.want)
	}
}
