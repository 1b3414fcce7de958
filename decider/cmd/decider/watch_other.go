//go:build !linux

package main

import "errors"

// watcher is Linux's (inotify) alone: elsewhere the decider reads its
// settings again on SIGHUP only.
type watcher struct{ Changed chan struct{} }

func watchFile(string) (*watcher, error) {
	return nil, errors.New("watching the settings file is not supported on this platform (Linux only)")
}

// Close stops watching.
func (w *watcher) Close() error { return nil }
