//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/srt-sandbox/decider/srtlink"
	"github.com/srt-sandbox/srt/sandbox"
)

// violationsOut writes each violation as one JSON line to --violations-fd.
type violationsOut struct {
	mu sync.Mutex
	w  io.Writer
	fd int
}

func openViolationsFD(v string) (*violationsOut, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 3 {
		return nil, usageError{fmt.Sprintf("--violations-fd needs a descriptor number of 3 or more (got %q)", v)}
	}
	if err := srtlink.Inherited(n); err != nil {
		return nil, fmt.Errorf("--violations-fd %d is not usable: %v", n, err)
	}
	return &violationsOut{w: os.NewFile(uintptr(n), "violations"), fd: n}, nil
}

func (o *violationsOut) write(v sandbox.Violation) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	o.mu.Lock()
	o.w.Write(append(b, '\n'))
	o.mu.Unlock()
}
