//go:build linux

package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"github.com/srt-sandbox/srt/sandbox"
	"github.com/srt-sandbox/srt/settings"
)

// A command in a sandbox: it may read, but writes nowhere except its
// private TMPDIR.
func Example() {
	cfg, err := settings.Parse([]byte(`{
		"network": {"allowedDomains": [], "deniedDomains": []},
		"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}
	}`))
	if err != nil {
		panic(err)
	}
	m, err := sandbox.New(cfg, sandbox.Options{})
	if err != nil {
		panic(err)
	}
	defer m.Close()
	cmd, err := m.Command(context.Background(), `echo hello; touch /etc/x 2>/dev/null || echo "/etc is read-only"; echo scratch > "$TMPDIR/f" && cat "$TMPDIR/f"`)
	if err != nil {
		panic(err)
	}
	defer cmd.Release()
	cmd.Stdout = os.Stdout
	cmd.Run()
	code, _ := cmd.Status()
	fmt.Println("exit", code)
	// Output:
	// hello
	// /etc is read-only
	// scratch
	// exit 0
}

// Quote turns an argument vector into the shell command line the sandbox
// runs, so that nothing is expanded twice.
func ExampleQuote() {
	fmt.Println(sandbox.Quote([]string{"echo", "a b", "$HOME", "it's", ""}))
	// Output: echo 'a b' '$HOME' 'it'"'"'s' ''
}

// Annotate appends a command's violations to its stderr the way the
// reference implementation shows them to an agent.
func ExampleAnnotate() {
	vs := []sandbox.Violation{{Line: "deny network-outbound other.test:443 (host is not on the allow list)"}}
	fmt.Println(sandbox.Annotate("curl: (56) CONNECT tunnel failed, response 403", vs))
	// Output:
	// curl: (56) CONNECT tunnel failed, response 403
	// <sandbox_violations>
	// deny network-outbound other.test:443 (host is not on the allow list)
	// </sandbox_violations>
}

// A command may carry its own allow list, registered under an id that is
// hard to guess; the id attributes its violations too.
func ExampleManager_RegisterCommandNetwork() {
	cfg, _ := settings.Parse([]byte(`{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`))
	m, err := sandbox.New(cfg, sandbox.Options{})
	if err != nil {
		panic(err)
	}
	defer m.Close()
	id := "tool-call-7f3c9a2e51d04b8c9e6f"
	if err := m.RegisterCommandNetwork(id, []string{"registry.npmjs.org"}); err != nil {
		panic(err)
	}
	cmd, err := m.Command(context.Background(), "npm install", sandbox.WithCommandID(id))
	if err != nil {
		panic(err)
	}
	defer cmd.Release()
	fmt.Println(cmd.Args[len(cmd.Args)-1]) // bubblewrap's last argument
	// Output: npm install
}

// Callers that start processes themselves take the command's argv form and
// call Attach once it runs.
func ExampleCmd_Argv() {
	cfg, _ := settings.Parse([]byte(`{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`))
	m, err := sandbox.New(cfg, sandbox.Options{})
	if err != nil {
		panic(err)
	}
	defer m.Close()
	cmd, err := m.Command(context.Background(), "echo started by the caller")
	if err != nil {
		panic(err)
	}
	defer cmd.Release()
	a := cmd.Argv()
	p := &exec.Cmd{Path: a.Path, Args: a.Args, Env: a.Env, Dir: a.Dir, ExtraFiles: a.ExtraFiles, Stdout: os.Stdout}
	if err := p.Start(); err != nil {
		panic(err)
	}
	cmd.Attach()
	p.Wait()
	<-cmd.Done()
	// Output: started by the caller
}
