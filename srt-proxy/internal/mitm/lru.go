package mitm

import "container/list"

// lru is a least-recently-used map of leaves by name. It is not safe for
// concurrent use; CA guards it.
type lru struct {
	max   int
	order *list.List // front: most recently used; values are *lruEntry
	byKey map[string]*list.Element
}

type lruEntry struct {
	key string
	val leaf
}

func newLRU(max int) *lru {
	return &lru{max: max, order: list.New(), byKey: make(map[string]*list.Element, max)}
}

func (l *lru) get(key string) (leaf, bool) {
	e, ok := l.byKey[key]
	if !ok {
		return leaf{}, false
	}
	l.order.MoveToFront(e)
	return e.Value.(*lruEntry).val, true
}

func (l *lru) put(key string, val leaf) {
	if e, ok := l.byKey[key]; ok {
		e.Value.(*lruEntry).val = val
		l.order.MoveToFront(e)
		return
	}
	l.byKey[key] = l.order.PushFront(&lruEntry{key: key, val: val})
	if l.order.Len() > l.max {
		old := l.order.Back()
		l.order.Remove(old)
		delete(l.byKey, old.Value.(*lruEntry).key)
	}
}

func (l *lru) len() int { return l.order.Len() }
