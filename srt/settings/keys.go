package settings

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// Key is one key of the settings file and what srt does with it besides
// checking it: whether Linux ignores it, whether srt refuses it for now,
// and who reads it only when it starts. Keys is the one list of them:
// the checker, the start-only warnings of a live update and the refusals
// of what is not implemented yet all follow it, and its tests hold it to
// shared/settings.schema.json and docs/settings.md.
type Key struct {
	// Path is the key's dotted path ("network.tlsTerminate"); "[]" stands
	// for every element of an array ("credentials.envVars[].mode").
	Path string
	// Ignored, when not "", says why srt accepts the key and does nothing
	// with it on Linux ("macOS only"): Config.Ignored lists it with this.
	Ignored string
	// NotYet, when not "", refuses the key (or, with NotYetValue, that
	// value of it): srt does not implement it yet. It is the message.
	NotYet      string
	NotYetValue string
	// StartOnly, when not "", is who reads the key only when it starts: a
	// live update (Manager.UpdateConfig, srt --control-fd) that changes it
	// leaves it as it was, and says so.
	StartOnly Reader
	// Example is a value of the key, as JSON, that srt accepts in the
	// smallest file (or refuses, when NotYet; for a path through an array,
	// a value of its top-level key); "" for a key no file can give alone.
	// The tests set each key to it, to see that it does what Keys says.
	Example string
	// value is the key's value in a Network, for StartOnly keys, to tell
	// whether an update changes it.
	value func(n *Network) any
}

// Reader is who reads a StartOnly key.
type Reader string

const (
	// ReadByProxy: srt passes the key to srt-proxy on its command line
	// (decider/srtlink's ProxyFlags), which srt-proxy reads when it starts.
	ReadByProxy Reader = "srt-proxy"
	// ReadBySRT: srt reads the key when it starts (when a library Manager
	// is made).
	ReadBySRT Reader = "srt"
)

// notYet is the message for a setting whose feature srt does not have yet.
// Running without it would silently drop what the setting asks for, so the
// file is refused instead.
const notYet = "srt does not implement this setting yet, and running without it would drop what it asks for; remove it, or use the reference implementation for this file"

// Keys are every key of the file's top level and of its network block, in
// the checker's order, and the deeper keys srt does something particular
// with.
var Keys = []Key{
	{Path: "network"},
	{Path: "filesystem"},
	{Path: "credentials", Example: `{}`},
	{Path: "ignoreViolations", Example: `{"*":["x.example"]}`},
	{Path: "enableWeakerNestedSandbox", Example: `true`},
	{Path: "allowNestedUserNamespaces", Example: `true`},
	{Path: "requireLandlock", Example: `true`},
	{Path: "backend", Example: `"bubblewrap"`},
	{Path: "allowWeaker", Example: `["network"]`},
	{Path: "enableWeakerNetworkIsolation", Ignored: "macOS only", Example: `true`},
	{Path: "allowAppleEvents", Ignored: "macOS only", Example: `true`},
	{Path: "allowPty", Ignored: "macOS only", Example: `true`},
	{Path: "ripgrep", Ignored: "configures the reference's ripgrep; srt walks the tree itself", Example: `{"command":"rg"}`},
	{Path: "mandatoryDenySearchDepth", Example: `5`},
	{Path: "seccomp", Ignored: "configures the reference's seccomp helper; srt has its own", Example: `{"applyPath":"/usr/lib/apply-seccomp"}`},
	{Path: "bwrapPath", Example: `"/usr/bin/bwrap"`},
	{Path: "socatPath", Ignored: "srt does not use socat", Example: `"/usr/bin/socat"`},
	{Path: "javaAgentJarPath", Ignored: "srt does not ship the Java proxy agent", Example: `"/opt/agent.jar"`},
	{Path: "git", Example: `{"safeDirectories":["/src"]}`},
	{Path: "windows", Ignored: "Windows only", Example: `{"backend":"mxc"}`},
	{Path: "environment", Example: `{"allow":["PATH","HOME","CI_*"]}`},
	{Path: "limits", Example: `{"processes":50,"memoryMiB":512,"tmpdirMiB":64,"openFiles":256,"cpuSeconds":60,"wallSeconds":600}`},

	// The decider's keys (decider/settingsfile), live.
	{Path: "network.allowedDomains", Example: `["a.example"]`},
	{Path: "network.deniedDomains", Example: `["b.example"]`},
	{Path: "network.deniedDomainReasons", Example: `{"b.example":"not this one"}`},
	{Path: "network.strictAllowlist", Example: `true`},
	{Path: "network.deniedResolvedAddresses", Example: `["10.0.0.0/8"]`},
	// srt's sandbox's and proxies'.
	{Path: "network.allowUnixSockets", Example: `["/run/x.sock"]`},
	{Path: "network.allowAllUnixSockets", Example: `true`},
	{Path: "network.allowLocalBinding", Example: `true`},
	{Path: "network.allowMachLookup", Ignored: "macOS only", Example: `["com.example.*"]`},
	{Path: "network.httpProxyPort", StartOnly: ReadBySRT, value: func(n *Network) any { return n.HTTPProxyPort }, Example: `8080`},
	{Path: "network.socksProxyPort", StartOnly: ReadBySRT, value: func(n *Network) any { return n.SOCKSProxyPort }, Example: `1081`},
	{Path: "network.mitmProxy", StartOnly: ReadByProxy, value: func(n *Network) any { return n.MitmProxy }, Example: `{"socketPath":"/run/m.sock","domains":["a.example"]}`},
	{Path: "network.exposeLoopbackPorts", Example: `[8080]`},
	{Path: "network.tlsTerminate", StartOnly: ReadByProxy, value: func(n *Network) any { return n.TLSTerminate }, Example: `{}`},
	{Path: "network.parentProxy", StartOnly: ReadByProxy, value: func(n *Network) any { return n.ParentProxy }, Example: `{"http":"http://proxy.example:3128"}`},
	{Path: "network.filterRequest"},
	{Path: "network.refuseOpaqueTunnels", StartOnly: ReadByProxy, value: func(n *Network) any { return n.RefuseOpaqueTunnels }, Example: `true`},
	{Path: "network.requireHostMatch", StartOnly: ReadByProxy, value: func(n *Network) any { return n.RequireHostMatch }, Example: `true`},
	{Path: "network.ambiguousRequestTarget", StartOnly: ReadByProxy, value: func(n *Network) any { return n.AmbiguousRequestTarget }, Example: `"normalize"`},
	{Path: "network.stripResponseHeaders", StartOnly: ReadByProxy, value: func(n *Network) any { return n.StripResponseHeaders }, Example: `["x-secret"]`},
	{Path: "network.allowPlaintextHeaderSet", StartOnly: ReadByProxy, value: func(n *Network) any { return n.AllowPlaintextHeaderSet }, Example: `true`},
}

// ExampleFile is the smallest settings file with the key set to Example
// (for a path through an array, its top-level key), or nil when it has
// none.
func (k Key) ExampleFile() []byte {
	if k.Example == "" {
		return nil
	}
	doc := map[string]any{
		"network":    map[string]any{"allowedDomains": []string{}, "deniedDomains": []string{}},
		"filesystem": map[string]any{"denyRead": []string{}, "allowWrite": []string{}, "denyWrite": []string{}},
	}
	segs := strings.Split(k.Path, ".")
	if strings.Contains(k.Path, "[]") {
		segs = segs[:1]
	}
	obj := doc
	for _, s := range segs[:len(segs)-1] {
		next, ok := obj[s].(map[string]any)
		if !ok {
			next = map[string]any{}
			obj[s] = next
		}
		obj = next
	}
	obj[segs[len(segs)-1]] = json.RawMessage(k.Example)
	b, err := json.Marshal(doc)
	if err != nil {
		panic(fmt.Sprintf("settings.Keys: %s: the example %s is not JSON", k.Path, k.Example))
	}
	return b
}

// StartOnlyChanges are the paths of the keys that reader reads only when
// it starts whose values differ between a and b, in Keys' order.
func StartOnlyChanges(a, b *Network, reader Reader) []string {
	var paths []string
	for _, k := range Keys {
		if k.StartOnly == reader && !reflect.DeepEqual(k.value(a), k.value(b)) {
			paths = append(paths, k.Path)
		}
	}
	return paths
}

// withKeys gives the fields of the object at prefix ("" for the top
// level) what Keys says of them: the reason Linux ignores one.
func withKeys(prefix string, fields []field) []field {
	for i := range fields {
		name := fields[i].Name
		if prefix != "" {
			name = prefix + "." + name
		}
		for _, k := range Keys {
			if k.Path == name {
				fields[i].Ignored = k.Ignored
			}
		}
	}
	return fields
}

// unimplemented refuses what Keys says srt does not implement yet. Each
// entry goes away when its feature lands.
func (c *checker) unimplemented(root *value) {
	for _, k := range Keys {
		if k.NotYet == "" {
			continue
		}
		eachAt(root, nil, strings.Split(strings.ReplaceAll(k.Path, "[]", ".[]"), "."), func(p path, v *value) {
			if k.NotYetValue == "" || (v.Kind == kindString && v.Str == k.NotYetValue) {
				c.Add(p, "%s", k.NotYet)
			}
		})
	}
}

// eachAt calls fn with every value at segs below v (at p): a key names a
// member of an object, "[]" every element of an array. A value of another
// kind than the path needs has nothing below it.
func eachAt(v *value, p path, segs []string, fn func(p path, v *value)) {
	if v == nil {
		return
	}
	if len(segs) == 0 {
		fn(p, v)
		return
	}
	switch seg := segs[0]; {
	case seg == "[]" && v.Kind == kindArray:
		for i, e := range v.Arr {
			eachAt(e, p.Idx(i), segs[1:], fn)
		}
	case seg != "[]" && v.Kind == kindObject:
		eachAt(v.Get(seg), p.Key(seg), segs[1:], fn)
	}
}
