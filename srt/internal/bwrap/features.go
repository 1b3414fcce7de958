//go:build linux

package bwrap

// BindFDVersion is the first bubblewrap with --bind-fd and --ro-bind-fd,
// which bind the file a descriptor names and check, after mounting, that
// the mount is that file (srt binds its grants that way: see plan.Mount).
var BindFDVersion = Version{0, 8, 0}

// HasBindFD reports whether this bubblewrap has --bind-fd.
func (i Info) HasBindFD() bool { return !i.Version.Less(BindFDVersion) }
