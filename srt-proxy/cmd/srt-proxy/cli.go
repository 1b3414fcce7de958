package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"
)

// version is srt-proxy's version (srt's).
const version = "0.1.0"

func run(args []string) int {
	code := 0
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version and exit"}
	app := &cli.App{
		Name:            "srt-proxy",
		Usage:           "srt's HTTP and SOCKS5 egress proxy; every decision is a decider's",
		Version:         version,
		HideHelpCommand: true,
		Writer:          os.Stdout,
		ErrWriter:       os.Stderr,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "srt-mode", Usage: "srt's own mode: listeners and stop come over --control-fd (srt starts srt-proxy so)"},
			&cli.IntFlag{Name: "decider-fd", Value: -1, Usage: "descriptor of a stream socket to the decider"},
			&cli.IntFlag{Name: "control-fd", Value: -1, Usage: "srt's mode: descriptor of srt's control channel"},
			&cli.StringFlag{Name: "parent-http", Usage: "parent proxy `URL` for plain HTTP"},
			&cli.StringFlag{Name: "parent-https", Usage: "parent proxy `URL` for tunnels (default: --parent-http)"},
			&cli.StringFlag{Name: "no-proxy", Usage: "destinations that bypass the parent proxy (NO_PROXY syntax)"},
			&cli.DurationFlag{Name: "verdict-timeout", Value: 5 * time.Second, Usage: "how long a request waits for its verdict"},
			&cli.BoolFlag{Name: "debug", Aliases: []string{"d"}, Usage: "one decision line per connection on stderr"},
		},
		ExitErrHandler: func(*cli.Context, error) {},
		Action: func(c *cli.Context) error {
			if !c.Bool("srt-mode") {
				code = 2
				return errors.New("proxy-only mode is not built yet; srt starts srt-proxy with --srt-mode")
			}
			if c.Int("decider-fd") < 0 || c.Int("control-fd") < 0 {
				code = 2
				return errors.New("--srt-mode needs --decider-fd and --control-fd")
			}
			err := runSRT(srtOptions{
				deciderFD: c.Int("decider-fd"), controlFD: c.Int("control-fd"),
				parentHTTP: c.String("parent-http"), parentHTTPS: c.String("parent-https"), noProxy: c.String("no-proxy"),
				verdictTimeout: c.Duration("verdict-timeout"), debug: c.Bool("debug"),
			})
			// In srt's mode srt-proxy stops when srt does; that is not a failure.
			if err != nil && c.Bool("debug") {
				fmt.Fprintf(os.Stderr, "srt-proxy: stopped (%v)\n", err)
			}
			return nil
		},
	}
	if err := app.Run(args); err != nil {
		fmt.Fprintf(os.Stderr, "srt-proxy: %v\n", err)
		if code == 0 {
			code = 2
		}
	}
	return code
}
