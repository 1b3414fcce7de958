//go:build linux

// Command libhost runs several commands under one srt library Manager, as an
// agent host does: every sandbox then shares one srt-proxy (and its name
// server's table of fake addresses). The e2e tests use it for attacks
// between sandboxes.
//
//	libhost SETTINGS [-report-fs] [-register ID=entry,entry]... [-parallel] NAME|ID|COMMAND...
//
// Each command's output is printed line by line as "[NAME] line", then
// "[NAME] exit=N"; every violation as "violation [KEY] line". Without
// -parallel the commands run one after the other. -report-fs sets
// Options.ReportFilesystemViolations.
package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/srt-sandbox/srt/sandbox"
	"github.com/srt-sandbox/srt/settings"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: libhost SETTINGS [-register ID=entry,entry]... [-parallel] NAME|ID|COMMAND...")
		os.Exit(2)
	}
	cfg, _, err := settings.Load(os.Args[1], true)
	if err != nil {
		fmt.Fprintln(os.Stderr, "libhost:", err)
		os.Exit(1)
	}
	var mu sync.Mutex
	out := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Printf(format, a...)
	}
	reportFS := false
	for _, a := range os.Args[2:] {
		reportFS = reportFS || a == "-report-fs"
	}
	m, err := sandbox.New(cfg, sandbox.Options{
		ReportFilesystemViolations: reportFS,
		SettingsFiles:              []string{os.Args[1]},
		Debug:                      os.Getenv("SRT_DEBUG") != "",
		OnViolation:                func(v sandbox.Violation) { out("violation [%s] %s\n", v.Command, v.Line) },
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "libhost:", err)
		os.Exit(1)
	}
	defer m.Close()
	parallel := false
	var specs []string
	args := os.Args[2:]
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-parallel":
			parallel = true
		case "-report-fs":
		case "-register":
			i++
			id, list, _ := strings.Cut(args[i], "=")
			if err := m.RegisterCommandNetwork(id, strings.Split(list, ",")); err != nil {
				fmt.Fprintln(os.Stderr, "libhost:", err)
				os.Exit(1)
			}
		default:
			specs = append(specs, args[i])
		}
	}
	var wg sync.WaitGroup
	for _, s := range specs {
		parts := strings.SplitN(s, "|", 3)
		if len(parts) != 3 {
			fmt.Fprintf(os.Stderr, "libhost: %q is not NAME|ID|COMMAND\n", s)
			os.Exit(2)
		}
		run := func() { runOne(m, parts[0], parts[1], parts[2], out) }
		if parallel {
			wg.Add(1)
			go func() { defer wg.Done(); run() }()
		} else {
			run()
		}
	}
	wg.Wait()
}

func runOne(m *sandbox.Manager, name, id, command string, out func(string, ...any)) {
	var opts []sandbox.CommandOption
	if id != "" {
		opts = append(opts, sandbox.WithCommandID(id))
	}
	opts = append(opts, sandbox.WithCommandText(name))
	cmd, err := m.Command(context.Background(), command, opts...)
	if err != nil {
		out("[%s] error: %v\n", name, err)
		return
	}
	defer cmd.Release()
	r, w := io.Pipe()
	cmd.Stdout, cmd.Stderr = w, w
	done := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			out("[%s] %s\n", name, sc.Text())
		}
		close(done)
	}()
	err = cmd.Run()
	w.Close()
	<-done
	code, ok := cmd.Status()
	if err != nil && !ok {
		out("[%s] error: %v\n", name, err)
	}
	out("[%s] exit=%d\n", name, code)
}
