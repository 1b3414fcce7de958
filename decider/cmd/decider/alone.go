package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/rs/zerolog"

	"github.com/srt-sandbox/decider/control"
	"github.com/srt-sandbox/decider/policy"
	"github.com/srt-sandbox/decider/protocol"
	"github.com/srt-sandbox/decider/settingsfile"
)

// alone is the decider run on its own, `decider --settings FILE`: it
// serves srt-proxy (run alone, proxy-only mode) with the network block of
// a settings file, and reads the file again on SIGHUP and when it changes.
type alone struct {
	*decider
	path string
	// last is the file as last read, and lastRead whether it could be, so
	// that a change of the directory that leaves it as it was is no reload.
	last     []byte
	lastRead bool
}

// Exit codes.
const (
	exitOK    = 0 // stopped: srt-proxy closed the stream, SIGTERM, SIGINT
	exitStop  = 1 // the settings cannot be used at the start, or srt-proxy broke the protocol
	exitUsage = 2 // the command line is wrong
)

// runAlone serves until srt-proxy goes away or a signal stops it, and
// returns the exit code. in and out are the stream to srt-proxy.
func runAlone(path string, in io.Reader, out io.Writer, log zerolog.Logger) int {
	n, data, err := readSettings(path)
	if err != nil {
		log.Error().Msg(err.Error())
		return exitStop
	}
	a := &alone{decider: newDecider(in, out, protocol.Line), path: path, last: data, lastRead: true}
	a.log = log
	a.lists = gateLists // no sync: srt's alone
	if err := a.eng.SetNetwork(n.Control(), false); err != nil {
		log.Error().Msg(err.Error())
		return exitStop
	}
	a.warnGate(n)
	log.Info().Str("file", path).Msg("settings loaded")

	// A write to srt-proxy after it has gone fails (EPIPE) rather than
	// killing the decider, which then says why it stops.
	signal.Ignore(syscall.SIGPIPE)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	w, err := watchFile(path)
	changed := make(<-chan struct{})
	if err != nil {
		log.Warn().Str("file", path).Msg("warning: the settings are read again on SIGHUP only: " + err.Error())
	} else {
		defer w.Close()
		changed = w.Changed
	}

	stopped := func(s os.Signal) int {
		log.Info().Msg("stopped (" + map[os.Signal]string{syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT"}[s] + ")")
		return exitOK
	}
	ended := func(err error) int {
		if errors.Is(err, errProxyGone) || errors.Is(err, errNoHello) {
			log.Info().Msg("stopped (srt-proxy closed the stream)")
			return exitOK
		}
		log.Error().Msg("stopped (" + err.Error() + ")")
		return exitStop
	}

	// The hello first: until it is sent, a reload is only remembered (the
	// hello carries the settings in force when it goes).
	helloed := make(chan error, 1)
	go func() { helloed <- a.hello() }()
	var reloadAsked, reloadChanged bool
	for waiting := true; waiting; {
		select {
		case <-hup:
			reloadAsked = true
		case <-changed:
			reloadChanged = true
		case s := <-stop:
			return stopped(s)
		case err := <-helloed:
			if err != nil {
				return ended(err)
			}
			waiting = false
		}
	}
	if !a.ext && len(a.eng.Network().DeniedResolvedAddresses) > 0 {
		return ended(errors.New("srt-proxy did not offer the srt.v1 extension, so network.deniedResolvedAddresses cannot reach its address check; run srt-proxy with its default line framing to the decider, or remove the setting"))
	}
	log.Info().Bool("srt_v1", a.ext).Msg("serving srt-proxy")
	if reloadAsked || reloadChanged {
		a.reload(reloadAsked)
	}
	served := make(chan error, 1)
	go func() { served <- a.proxyLoop(a.decide) }()
	for {
		select {
		case <-hup:
			a.reload(true)
		case <-changed:
			a.reload(false)
		case s := <-stop:
			return stopped(s)
		case err := <-served:
			return ended(err)
		}
	}
}

// decide answers r: no ask callback, so every decision is final.
func (a *alone) decide(r *protocol.Req) {
	dec, _ := a.eng.Settle(r.Host, r.Port, r.User)
	a.answer(r, dec)
}

// reload reads the file again and puts it in force, or keeps the settings
// in force and says why. A change of the directory that leaves the file as
// it was is none (asked: SIGHUP, which applies the file in any case).
func (a *alone) reload(asked bool) {
	n, data, err := readSettings(a.path)
	read := data != nil
	if !asked && read == a.lastRead && bytes.Equal(data, a.last) {
		a.log.Debug().Str("file", a.path).Msg("the settings' directory changed, the file did not")
		return
	}
	a.last, a.lastRead = data, read
	keep := func(why string) {
		a.log.Error().Msg(strings.TrimSuffix(why, ".") + "; keeping the settings in force")
	}
	if err != nil {
		keep(err.Error())
		return
	}
	if !a.ext && len(n.DeniedResolvedAddresses) > 0 {
		keep(a.path + ": srt-proxy did not offer the srt.v1 extension, so network.deniedResolvedAddresses cannot reach its address check")
		return
	}
	cn := n.Control()
	old := a.eng.Network()
	if err := a.eng.SetNetwork(cn, false); err != nil {
		keep(a.path + ": " + err.Error())
		return
	}
	// A write that fails means srt-proxy is gone: the proxy loop ends and
	// says so.
	a.update(cn)
	a.warnGate(n)
	if !a.ext {
		oa, od := gateLists(old)
		na, nd := gateLists(cn)
		if !slices.Equal(oa, na) || !slices.Equal(od, nd) {
			a.log.Warn().Str("file", a.path).Msg("warning: srt-proxy did not offer the srt.v1 extension, so its host gate keeps the lists it got when it started until it starts again; the decider decides with the new settings")
		}
	}
	a.log.Info().Str("file", a.path).Msg("settings reloaded")
}

// warnGate says which allowedDomains entries srt-proxy's host gate cannot
// be given: srt-proxy refuses those destinations before asking.
func (a *alone) warnGate(n *settingsfile.Network) {
	for i, e := range n.AllowedDomains {
		if p, err := policy.ParseAllowPattern(e); err == nil {
			if _, ok := p.EgressEntry(); !ok {
				a.log.Warn().Str("file", a.path).Msg(fmt.Sprintf(`warning: network.allowedDomains.%d %q cannot be given to srt-proxy's host gate (the decider protocol's lists take names of letters, digits and "-" whose last label starts with a letter), so srt-proxy refuses that destination before asking the decider`, i, e))
			}
		}
	}
}

// gateLists are the hello's (and an update's) lists for srt-proxy run
// alone, whose host gate refuses a destination on deniedDomains or on no
// allowedDomains entry before asking: every allowedDomains entry the
// hello can carry (policy.Pattern.EgressEntry), and of deniedDomains only
// the IP literals, which the address check also needs (a name resolving
// to one is refused). A name on deniedDomains is left to the decider, so
// that its deniedDomainReasons reason reaches the client.
func gateLists(n *control.Network) (allowed, denied []string) {
	allowed, denied = []string{}, []string{}
	add := func(list []string, p policy.Pattern) []string {
		if e, ok := p.EgressEntry(); ok && !slices.Contains(list, e) {
			return append(list, e)
		}
		return list
	}
	for _, e := range n.AllowedDomains {
		if p, err := policy.ParseAllowPattern(e); err == nil {
			allowed = add(allowed, p)
		}
	}
	for _, e := range n.DeniedDomains {
		if p, err := policy.ParseDenyPattern(e); err == nil && p.IsIP() {
			denied = add(denied, p)
		}
	}
	return allowed, denied
}

// readSettings reads and checks the decider's settings file. Its errors
// start with the path, as srt's do: "<path> does not exist.", "<path>
// could not be read (EACCES).", "<path> is empty. …", "<path> is not valid
// JSON: …", "<path> does not hold a valid config — <key>: <message>; …".
// data is the file's content when it could be read.
func readSettings(path string) (*settingsfile.Network, []byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("%s does not exist.", path)
		}
		return nil, nil, fmt.Errorf("%s could not be read (%s).", path, settingsfile.ErrnoName(err))
	}
	if strings.TrimSpace(string(data)) == "" {
		return nil, data, fmt.Errorf(`%s is empty. Put the network block in it: {"network": {"allowedDomains": […], "deniedDomains": […]}}.`, path)
	}
	n, err := settingsfile.ParseDecider(data)
	if err != nil {
		return nil, data, fmt.Errorf("%s %w", path, err)
	}
	return n, data, nil
}
