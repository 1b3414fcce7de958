//go:build linux

package placeholders

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// acquisition is one Acquire at work. It makes the placeholders that do
// not exist in batches: each is made under its temporary name (makeAt);
// then one write of the journal records the identities of the batch, and
// then each gets its wanted name (settle). A batch ends before a want
// beneath one of its directories, which must have its name first. One
// write for a batch, not one for each placeholder, because each costs a
// rename in the state directory, which is slow on a disk.
type acquisition struct {
	r       *Registry
	j       *journal
	wants   []Want
	uid     int
	slots   []held // by want
	state   []slot // by want
	batch   []int  // the wants made and not yet named
	missing []string
}

// slot is what an acquisition has of one want.
type slot uint8

const (
	empty   slot = iota // nothing
	holding             // slots[i] holds the path
	making              // slots[i] holds a placeholder under its temporary name
)

func newAcquisition(r *Registry, j *journal, wants []Want, uid int) *acquisition {
	return &acquisition{r: r, j: j, wants: wants, uid: uid, slots: make([]held, len(wants)), state: make([]slot, len(wants))}
}

// run takes every want, in order.
func (a *acquisition) run() error {
	for i, w := range a.wants {
		if a.beneathBatch(w.Path) {
			if err := a.nameBatch(); err != nil {
				return err
			}
		}
		h, out, err := take(w, a.uid, a.j.Entries[i].Tmp)
		if err != nil {
			a.discard()
			return err
		}
		a.took(i, h, out)
	}
	return a.nameBatch()
}

// held lists what the acquisition holds, in the order of the wants.
func (a *acquisition) held() []held {
	var out []held
	for i, s := range a.state {
		if s == holding {
			out = append(out, a.slots[i])
		}
	}
	return out
}

// took files the outcome of taking want i.
func (a *acquisition) took(i int, h held, out outcome) {
	a.slots[i], a.state[i] = h, empty
	switch out {
	case took:
		a.state[i] = holding
	case made:
		a.state[i] = making
		a.batch = append(a.batch, i)
	case missing:
		a.missing = append(a.missing, a.wants[i].Path)
	}
}

// beneathBatch says whether p lies beneath a directory of the batch.
func (a *acquisition) beneathBatch(p string) bool {
	for _, i := range a.batch {
		if a.wants[i].Dir && beneath(a.wants[i].Path, []entry{{Path: p}}) {
			return true
		}
	}
	return false
}

// nameBatch ends the batch: the journal records what it made, and each gets
// its wanted name. One whose path someone else took meanwhile is taken
// again, and what that makes gets its name at once.
func (a *acquisition) nameBatch() error {
	if len(a.batch) == 0 {
		return nil
	}
	for _, i := range a.batch {
		a.j.Entries[i] = a.slots[i].e
	}
	if err := a.j.write(a.r.dir); err != nil {
		a.discard()
		return err
	}
	batch := a.batch
	a.batch = nil
	for _, i := range batch {
		if err := a.settleOne(i); err != nil {
			a.discard()
			return err
		}
	}
	return nil
}

// settleOne gives the placeholder of want i its name.
func (a *acquisition) settleOne(i int) error {
	w := a.wants[i]
	for try := 0; try < maxTries; try++ {
		h := a.slots[i]
		out, again, err := settle(&h, w)
		if err != nil || !again {
			a.took(i, h, out)
			return err
		}
		h, out, err = take(w, a.uid, a.j.Entries[i].Tmp)
		a.took(i, h, out)
		if err != nil || out != made {
			return err
		}
		a.batch = nil // i alone: made again, named at once
		a.j.Entries[i] = h.e
		if err := a.j.write(a.r.dir); err != nil {
			return err
		}
	}
	return fmt.Errorf("placeholder %s: it kept changing while srt made it; something is replacing it", w.Path)
}

// discard removes every placeholder the acquisition made and has not
// named.
func (a *acquisition) discard() {
	for i, s := range a.state {
		if s == making {
			h := a.slots[i]
			discard(h.dir, h.e.Tmp, h.fd, h.e.Dir)
			unix.Close(h.dir)
			a.slots[i], a.state[i] = held{}, empty
		}
	}
	a.batch = nil
}
