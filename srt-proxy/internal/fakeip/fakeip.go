// Package fakeip is the table behind the sandbox's name server
// (internal/dnsserver): every name the sandbox looks up gets an IPv4 and
// an IPv6 address of a private range that stands for it, and a captured
// connection to one of them (internal/capture) is decided as a connection
// to the name. srt-proxy keeps one table per sandbox.
//
// The table is bounded: it keeps Size names, and a name looked up when it
// is full takes the place of the one used least recently (a lookup by
// name or by address counts as a use). A freed address is handed out
// again only after every other free one (first in, first out), so an
// address a program kept past its name's eviction stays unknown for as
// long as the pool allows, rather than soon standing for another name.
package fakeip

import (
	"container/list"
	"net/netip"
	"sync"
)

// The fake ranges. 198.18.0.0/15 is reserved for benchmarking (RFC 2544)
// and never routed; its upper half is the table's, its lower half holds
// the sandbox namespace's own address (198.18.0.1). fd00:5253::/32 is a
// unique local range (RFC 4193); its subnet 1 is the table's, subnet 0
// holds the namespace's own address (fd00:5253::1).
var (
	V4 = netip.MustParsePrefix("198.18.128.0/17")
	V6 = netip.MustParsePrefix("fd00:5253:0:1::/64")
)

// poolBits is the size of the address pool: the host bits of V4. Index 0
// (198.18.128.0, fd00:5253:0:1::) is never handed out.
const poolBits = 32 - 17

// DefaultSize is the number of names a zero Size keeps: half the pool, so
// that a freed address waits at least that many evictions before reuse.
const DefaultSize = 1 << (poolBits - 1)

// Table maps names to fake addresses and back. Its zero value is ready;
// set Size before the first use.
type Table struct {
	// Size is how many names the table keeps (1 to DefaultSize); 0 means
	// DefaultSize.
	Size int

	mu     sync.Mutex
	byName map[string]*list.Element
	byIdx  map[uint32]*list.Element
	lru    list.List // of *entry, most recently used first
	next   uint32    // the lowest index never handed out
	free   []uint32  // freed indices, oldest first
}

type entry struct {
	name string
	idx  uint32
}

func (t *Table) size() int {
	if t.Size <= 0 || t.Size > DefaultSize {
		return DefaultSize
	}
	return t.Size
}

// pool is the number of indices in use: twice the size, at most the
// whole range.
func (t *Table) pool() uint32 { return uint32(min(2*t.size(), 1<<poolBits)) }

// Lookup returns the addresses that stand for name, giving it a pair if
// it has none. name must be canonical (hostname.Canonical): the table
// compares names byte for byte.
func (t *Table) Lookup(name string) (v4, v6 netip.Addr) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byName == nil {
		t.byName = map[string]*list.Element{}
		t.byIdx = map[uint32]*list.Element{}
		t.next = 1
	}
	el, ok := t.byName[name]
	if ok {
		t.lru.MoveToFront(el)
	} else {
		if t.lru.Len() >= t.size() {
			t.evict(t.lru.Back())
		}
		e := &entry{name: name, idx: t.take()}
		el = t.lru.PushFront(e)
		t.byName[name] = el
		t.byIdx[e.idx] = el
	}
	idx := el.Value.(*entry).idx
	return addrV4(idx), addrV6(idx)
}

// take returns a free index: one never handed out while there is one,
// else the one freed longest ago. There is always one: at most size
// indices are in use, and the pool is larger.
func (t *Table) take() uint32 {
	if t.next < t.pool() {
		t.next++
		return t.next - 1
	}
	idx := t.free[0]
	t.free = t.free[1:]
	return idx
}

func (t *Table) evict(el *list.Element) {
	e := el.Value.(*entry)
	t.lru.Remove(el)
	delete(t.byName, e.name)
	delete(t.byIdx, e.idx)
	t.free = append(t.free, e.idx)
}

// Name returns the name a fake address stands for; ok is false when it
// stands for none (never handed out, or its name was evicted).
func (t *Table) Name(a netip.Addr) (name string, ok bool) {
	idx, fake := index(a)
	if !fake {
		return "", false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	el, ok := t.byIdx[idx]
	if !ok {
		return "", false
	}
	t.lru.MoveToFront(el)
	return el.Value.(*entry).name, true
}

// IsFake reports whether a lies in one of the fake ranges.
func IsFake(a netip.Addr) bool {
	_, fake := index(a)
	return fake
}

// index is the pool index a fake address encodes. An IPv6 address beyond
// the pool's size is in the range but encodes no index: it is fake (never
// handed out), with an index no entry has.
func index(a netip.Addr) (uint32, bool) {
	a = a.Unmap()
	switch {
	case V4.Contains(a):
		b := a.As4()
		return (uint32(b[2])<<8 | uint32(b[3])) & (1<<poolBits - 1), true
	case V6.Contains(a):
		b := a.As16()
		for _, c := range b[8:14] {
			if c != 0 {
				return 1 << poolBits, true // beyond the pool
			}
		}
		return uint32(b[14])<<8 | uint32(b[15]), true
	}
	return 0, false
}

func addrV4(idx uint32) netip.Addr {
	b := V4.Addr().As4()
	b[2] |= byte(idx >> 8)
	b[3] = byte(idx)
	return netip.AddrFrom4(b)
}

func addrV6(idx uint32) netip.Addr {
	b := V6.Addr().As16()
	b[14], b[15] = byte(idx>>8), byte(idx)
	return netip.AddrFrom16(b)
}
