package plan

import (
	"errors"
	"io/fs"
	"path"
)

// resolvConfPath is the file the sandbox's resolver reads.
const resolvConfPath = "/etc/resolv.conf"

// resolvConf sets where the sandbox's resolv.conf is bound: over
// /etc/resolv.conf, or, where that is a symlink (systemd-resolved's
// stub-resolv.conf, NetworkManager's), over the file it leads to, which
// the symlink then leads to inside too. bubblewrap cannot make a file in
// the read-only root: where the file does not exist the sandbox keeps its
// resolver unset, and the plan says so.
func (b *builder) resolvConf() {
	p, err := followLinks(b.in.FS, resolvConfPath)
	if err == nil {
		var fi fs.FileInfo
		if fi, err = b.in.FS.Lstat(p); err == nil && !fi.Mode().IsRegular() {
			err = errors.New("not a regular file")
		}
	}
	if err == nil {
		if have, rerr := b.in.FS.ReadFile(p, len(b.in.Network.ResolvConf)+1); rerr == nil && string(have) == b.in.Network.ResolvConf {
			return
		}
	}
	if err != nil {
		b.p.Warnings = append(b.p.Warnings, "programs that resolve names themselves cannot inside the sandbox: "+resolvConfPath+" leads to "+p+", which cannot be replaced ("+errText(err)+"); programs that use the proxy settings are not affected")
		return
	}
	b.p.ResolvConf = p
}

// followLinks resolves every symlink of an absolute path, as the kernel
// would, through fsys.
func followLinks(fsys interface {
	Lstat(string) (fs.FileInfo, error)
	Readlink(string) (string, error)
}, p string) (string, error) {
	for hops := 0; hops < 40; hops++ {
		// The first symlink along the path, if any.
		resolved, rest := "/", p
		found := false
		for rest != "" && rest != "/" {
			var elem string
			rest = rest[1:]
			if i := indexSlash(rest); i >= 0 {
				elem, rest = rest[:i], rest[i:]
			} else {
				elem, rest = rest, ""
			}
			next := path.Join(resolved, elem)
			fi, err := fsys.Lstat(next)
			if err != nil {
				return next, err
			}
			if fi.Mode()&fs.ModeSymlink != 0 {
				target, err := fsys.Readlink(next)
				if err != nil {
					return next, err
				}
				if !path.IsAbs(target) {
					target = path.Join(resolved, target)
				}
				p = path.Join(target, rest)
				found = true
				break
			}
			resolved = next
		}
		if !found {
			return path.Clean(p), nil
		}
	}
	return p, errors.New("too many levels of symbolic links")
}

func indexSlash(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}

func errText(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "it does not exist"
	}
	return err.Error()
}
