//go:build linux

package e2e

import (
	"crypto/sha1"
	"encoding/hex"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// The JVM tests: java and Maven inside the sandbox reach an allowed host
// and are refused a denied one with nothing JVM-specific set (no
// JAVA_TOOL_OPTIONS, no agent). Java ignores the proxy variables
// (HTTP_PROXY and the rest: its default ProxySelector reads the
// http.proxyHost properties, not the environment), so its connections
// are direct ones, which the sandbox's network namespace captures and
// srt-proxy decides as CONNECTs (docs/settings.md, "JVM tools"). Gradle is
// left out: Debian 12's gradle (4.4.1) does not run on Java 17.

// fetchJava is a single-file Java program (java Fetch.java URL…): for each
// URL, the proxy Java's default selector picks for it, then the status
// and the first line of the body, or the exception.
const fetchJava = `import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

public class Fetch {
    public static void main(String[] args) {
        HttpClient c = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        for (String a : args) {
            URI u = URI.create(a);
            System.out.println(a + " proxy=" + ProxySelector.getDefault().select(u));
            try {
                HttpResponse<String> r = c.send(HttpRequest.newBuilder(u).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
                System.out.println(a + " status=" + r.statusCode() + " body=" + r.body().lines().findFirst().orElse(""));
            } catch (Exception e) {
                System.out.println(a + " error=" + e.getClass().getSimpleName());
            }
        }
    }
}
`

// needJVM skips unless the JDK (the source launcher needs its compiler)
// and, when mvn is true, Maven are installed (scripts/test installs both).
func needJVM(t *testing.T, mvn bool) {
	t.Helper()
	for _, p := range []string{"java", "javac"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("NOT TESTED: no %s (scripts/test installs openjdk-17-jdk-headless)", p)
		}
	}
	if _, err := exec.LookPath("mvn"); mvn && err != nil {
		t.Skip("NOT TESTED: no mvn (scripts/test installs maven)")
	}
}

// TestJavaHTTPClient: java.net.http.HttpClient inside reaches a host
// loopback server an allowedDomains entry names; a loopback port no entry
// names stays the sandbox's own (connection refused); a host name not on
// the list is decided and refused (the connection is reset, a violation
// names it). Java picks no proxy (DIRECT) although the proxy variables
// are set, and srt sets no JAVA_TOOL_OPTIONS.
func TestJavaHTTPClient(t *testing.T) {
	skipOnLandlock(t)
	needJVM(t, false)
	up, other := startUpstream(t), startUpstream(t)
	forEach(t, func(t *testing.T, w *workspace) {
		w.write("home/proj/Fetch.java", fetchJava)
		allowed, unlisted, denied := "http://"+up.addr()+"/java", "http://"+other.addr()+"/other", "http://evil.test:"+itoa(other.port)+"/evil"
		r := w.srt("-s", w.settings(netSettings([]string{up.addr()}, nil, "")), "--show-violations", "-c",
			`echo "jto=[$JAVA_TOOL_OPTIONS] http_proxy=${HTTP_PROXY:+set}"; java Fetch.java `+allowed+" "+unlisted+" "+denied)
		expect(t, r, 0, "jto=[] http_proxy=set",
			allowed+" proxy=[DIRECT]", allowed+" status=200 body=upstream saw GET /java host="+up.addr(),
			unlisted+" proxy=[DIRECT]", unlisted+" error=ConnectException",
			// Reset before or after the connection completes, as for curl
			// (resetFn): ConnectException or IOException.
			denied+" proxy=[DIRECT]", denied+" error=", "!"+denied+" status=",
			"deny network-outbound evil.test:"+itoa(other.port)+" (host is not on the allow list)",
			"!upstream saw GET /other", "!upstream saw GET /evil")
	})
}

// mavenRepo is a loopback Maven repository holding one parent POM (and
// its .sha1), recording the paths it is asked for.
type mavenRepo struct {
	ln   net.Listener
	mu   sync.Mutex
	seen []string
}

const parentPOM = `<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>org.example</groupId><artifactId>srt-parent</artifactId><version>1</version><packaging>pom</packaging>
<description>served from the loopback repository</description></project>
`

func startMavenRepo(t *testing.T) *mavenRepo {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha1.Sum([]byte(parentPOM))
	files := map[string]string{
		"/org/example/srt-parent/1/srt-parent-1.pom":      parentPOM,
		"/org/example/srt-parent/1/srt-parent-1.pom.sha1": hex.EncodeToString(sum[:]),
	}
	m := &mavenRepo{ln: ln}
	srv := &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		m.seen = append(m.seen, r.Method+" "+r.URL.Path)
		m.mu.Unlock()
		body, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(rw, r)
			return
		}
		rw.Write([]byte(body))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return m
}

func (m *mavenRepo) requests() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return strings.Join(m.seen, "\n")
}

// mavenProject is a project whose parent POM Maven must fetch while it
// builds the model (before any plugin, so no plugin needs to be in a
// local repository), and a settings.xml whose mirror of every repository
// is mirror.
func (w *workspace) mavenProject(dir, mirror string) {
	w.write(dir+"/pom.xml", `<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<parent><groupId>org.example</groupId><artifactId>srt-parent</artifactId><version>1</version><relativePath/></parent>
<artifactId>child</artifactId><packaging>pom</packaging></project>
`)
	w.write(dir+"/settings.xml", `<settings><mirrors><mirror><id>loopback</id><mirrorOf>*</mirrorOf><url>`+mirror+`</url></mirror></mirrors></settings>
`)
}

// TestMaven: mvn inside fetches a parent POM from a loopback repository
// an allowedDomains entry names (Maven's own HTTP client, no proxy set
// up for it), and one whose repository is a host not on the list fails
// to resolve it, refused by srt (a violation names the host).
func TestMaven(t *testing.T) {
	skipOnLandlock(t)
	needJVM(t, true)
	repo := startMavenRepo(t)
	port := repo.ln.Addr().(*net.TCPAddr).Port
	forEach(t, func(t *testing.T, w *workspace) {
		w.mavenProject("home/proj/ok", "http://"+repo.ln.Addr().String()+"/")
		w.mavenProject("home/proj/denied", "http://evil.test:"+itoa(port)+"/")
		s := `{"network":{"allowedDomains":["` + repo.ln.Addr().String() + `"],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}`
		mvn := `mvn -B -q -s settings.xml -Dmaven.repo.local="$PWD/m2" validate`
		r := w.srt("-s", w.settings(s), "--show-violations", "-c",
			`(cd ok && `+mvn+`; echo "ok=$?"; grep -o 'served from the loopback repository' m2/org/example/srt-parent/1/srt-parent-1.pom); `+
				`(cd denied && `+mvn+` 2>&1 | grep -o 'Non-resolvable parent POM' | head -1; echo "denied=$?"; ls m2/org/example/srt-parent/1/*.pom 2>&1 | grep -c 'No such')`)
		expect(t, r, 0, "ok=0\nserved from the loopback repository\n", "Non-resolvable parent POM\ndenied=0\n1\n",
			"deny network-outbound evil.test:"+itoa(port)+" (host is not on the allow list)")
		if got := repo.requests(); !strings.Contains(got, "GET /org/example/srt-parent/1/srt-parent-1.pom") {
			t.Errorf("the repository saw %q", got)
		}
	})
}
