package settings

// Refusals of requireLandlock beside a setting under which srt applies no
// Landlock write limit: the file would ask for the limit and turn it off.
const (
	requireLandlockNested   = "cannot hold with allowNestedUserNamespaces, which turns Landlock's write limit off (a nested sandbox must change mounts, and Landlock forbids that to a process it limits); remove one of the two"
	requireLandlockDisabled = "cannot hold with filesystem.disabled, under which srt applies no filesystem rule and so no Landlock; remove one of the two"
)

// requireLandlock reads requireLandlock, refusing it beside the settings
// that turn Landlock's write limit off.
func (c *checker) requireLandlock(p path, v *value, cfg *Config, root *value) {
	on, ok := c.Boolean(p, v)
	if !ok || !on {
		return
	}
	cfg.RequireLandlock = true
	if isTrue(root.Get("allowNestedUserNamespaces")) {
		c.Add(p, "%s", requireLandlockNested)
	}
	if fs := root.Get("filesystem"); fs != nil && isTrue(fs.Get("disabled")) {
		c.Add(p, "%s", requireLandlockDisabled)
	}
}

func isTrue(v *value) bool { return v != nil && v.Kind == kindBool && v.Bool }
