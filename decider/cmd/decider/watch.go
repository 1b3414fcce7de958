//go:build linux

package main

import (
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// settle is how long the settings' directories must be quiet after a
// change before the file is read again: an editor or a deployment tool
// writes a file in several steps.
const settle = 150 * time.Millisecond

// watchEvents are the changes to a directory entry that can change what a
// path in it reads as: written, replaced (renamed over, as editors and
// Kubernetes' ConfigMap volumes do), created, removed, its mode changed.
const watchEvents = unix.IN_CLOSE_WRITE | unix.IN_MODIFY | unix.IN_MOVED_TO | unix.IN_MOVED_FROM |
	unix.IN_CREATE | unix.IN_DELETE | unix.IN_ATTRIB | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF

// watcher tells when the settings file may have changed: it watches the
// directory of the path as given and, when that is a symbolic link, the
// directory of the file it leads to.
type watcher struct {
	f       *os.File
	Changed chan struct{} // one pending signal at most
}

// watchFile starts watching for changes to path's directories.
func watchFile(path string) (*watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, os.NewSyscallError("inotify_init1", err)
	}
	dirs := []string{filepath.Dir(path)}
	if real, err := filepath.EvalSymlinks(path); err == nil && filepath.Dir(real) != dirs[0] {
		dirs = append(dirs, filepath.Dir(real))
	}
	for _, d := range dirs {
		if _, err := unix.InotifyAddWatch(fd, d, watchEvents); err != nil {
			unix.Close(fd)
			return nil, &os.PathError{Op: "inotify_add_watch", Path: d, Err: err}
		}
	}
	// Non-blocking: the runtime's poller reads it, and Close ends a read.
	w := &watcher{f: os.NewFile(uintptr(fd), "inotify"), Changed: make(chan struct{}, 1)}
	go w.loop()
	return w, nil
}

// loop signals Changed once the directories have been quiet for settle
// after an event.
func (w *watcher) loop() {
	events := make(chan struct{}, 1)
	go func() {
		buf := make([]byte, 64<<10)
		for {
			if _, err := w.f.Read(buf); err != nil {
				close(events)
				return
			}
			select {
			case events <- struct{}{}:
			default:
			}
		}
	}()
	var quiet <-chan time.Time
	for {
		select {
		case _, ok := <-events:
			if !ok {
				return
			}
			quiet = time.After(settle)
		case <-quiet:
			quiet = nil
			select {
			case w.Changed <- struct{}{}:
			default:
			}
		}
	}
}

// Close stops watching.
func (w *watcher) Close() error { return w.f.Close() }
