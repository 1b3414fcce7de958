package plan

import "github.com/srt-sandbox/srt/internal/initstage"

// ObserveRules are the plan as the filesystem observer reads it
// (--report-filesystem-violations): the view of "/" and of every path a
// mount covers, in the order bubblewrap mounts them (a later mount at the
// same path wins), so that the observer's Refused agrees with Writable and
// Readable. The kernel's covers (/sys read-only where "/" is writable),
// the helpers and the sandbox's resolv.conf are read-only mounts too.
func (p *Plan) ObserveRules() *initstage.FSRules {
	r := &initstage.FSRules{Root: observeView(p.Root)}
	add := func(path string, v View) {
		r.Guards = append(r.Guards, initstage.Guard{Path: path, View: observeView(v)})
	}
	for _, m := range p.Kernel {
		add(m.Path, m.View)
	}
	for _, m := range p.Mounts {
		add(m.Path, m.View)
	}
	for _, h := range p.Helpers {
		add(h, HostRO)
	}
	if p.ResolvConf != "" {
		add(p.ResolvConf, HostRO)
	}
	return r
}

func observeView(v View) byte {
	switch v {
	case HostRW:
		return initstage.ViewWritable
	case HostRO:
		return initstage.ViewReadOnly
	}
	return initstage.ViewHidden
}
