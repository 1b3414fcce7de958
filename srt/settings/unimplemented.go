package settings

import "fmt"

// notYet is the message for a setting whose feature srt does not have yet.
// Running without it would silently drop what the setting asks for, so the
// file is refused instead.
const notYet = "srt does not implement this setting yet, and running without it would drop what it asks for; remove it, or use the reference implementation for this file"

// unimplemented refuses settings whose features are not built yet. Each
// entry goes away when its feature lands.
func (c *checker) unimplemented(cfg *Config, root *value) {
	net := root.Get("network")
	if net.Get("mitmProxy") != nil {
		c.Add(path{"network", "mitmProxy"}, "%s", notYet)
	}
	for i, e := range cfg.Credentials.EnvVars {
		if e.Mode == "mask" {
			c.Add(path{"credentials", "envVars", fmt.Sprint(i), "mode"}, `"mask" is not implemented by srt yet; use "deny" to keep the variable out of the sandbox`)
		}
	}
	for i, f := range cfg.Credentials.Files {
		if f.Mode == "mask" {
			c.Add(path{"credentials", "files", fmt.Sprint(i), "mode"}, `"mask" is not implemented by srt yet; use "deny" to keep the file out of the sandbox`)
		}
	}
	cred := root.Get("credentials")
	for _, key := range []string{"awsPairs", "sigv4"} {
		if cred != nil && cred.Get(key) != nil {
			c.Add(path{"credentials", key}, "%s", notYet)
		}
	}
}
