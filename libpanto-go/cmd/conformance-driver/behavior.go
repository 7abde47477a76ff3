package main

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"panto.dev/panto"
)

// behavior is what a case's tool handler does (tests/conformance/README.md, "Tools in a
// case"): what it does first (before), then what it ends with.
type behavior struct {
	Return      *string `json:"return"`
	Raise       *string `json:"raise"`
	ReturnInput bool    `json:"return_input"`
	ReturnParts []part  `json:"return_parts"`

	SleepMs    int               `json:"sleep_ms"`
	Rendezvous *rendezvousTarget `json:"rendezvous"`
	Progress   []progressStep    `json:"progress"`
	Exclusive  bool              `json:"exclusive"`
}

// rendezvousTarget is [GROUP, COUNT].
type rendezvousTarget struct {
	group string
	count int
}

func (r *rendezvousTarget) UnmarshalJSON(data []byte) error {
	var pair [2]any
	if err := json.Unmarshal(data, &pair); err != nil {
		return err
	}
	group, ok1 := pair[0].(string)
	count, ok2 := pair[1].(float64)
	if !ok1 || !ok2 {
		return errors.New("rendezvous is [GROUP, COUNT]")
	}
	r.group, r.count = group, int(count)
	return nil
}

// progressStep is [TEXT, FRACTION|null].
type progressStep struct {
	text     string
	fraction float64 // -1: none
}

func (p *progressStep) UnmarshalJSON(data []byte) error {
	var pair [2]*any
	if err := json.Unmarshal(data, &pair); err != nil {
		return err
	}
	text, ok := any(nil), false
	if pair[0] != nil {
		text = *pair[0]
	}
	if p.text, ok = text.(string); !ok {
		return errors.New("a progress step is [TEXT, FRACTION|null]")
	}
	p.fraction = -1
	if pair[1] != nil {
		f, ok := (*pair[1]).(float64)
		if !ok {
			return errors.New("a progress step's fraction is a number or null")
		}
		p.fraction = f
	}
	return nil
}

// The handlers of the driver run: how many run now and have started, for rendezvous and
// exclusive.
var handlers = struct {
	sync.Mutex
	cond    *sync.Cond
	running int
	started int
	groups  map[string]int // rendezvous group -> handlers of it started
}{groups: map[string]int{}}

func init() { handlers.cond = sync.NewCond(&handlers.Mutex) }

// before runs the steps of the behavior that come before its end (sleep, rendezvous,
// progress, exclusive), counting the handler as running meanwhile: its end, which follows,
// takes no time that matters.
func (b behavior) before(ctx context.Context) error {
	handlers.Lock()
	handlers.running++
	handlers.started++
	aloneAtStart, started := handlers.running == 1, handlers.started
	handlers.Unlock()
	defer func() {
		handlers.Lock()
		handlers.running--
		handlers.Unlock()
	}()
	if b.SleepMs > 0 {
		time.Sleep(time.Duration(b.SleepMs) * time.Millisecond)
	}
	if r := b.Rendezvous; r != nil && !meet(r.group, r.count) {
		return errors.New("ran alone")
	}
	for _, p := range b.Progress {
		panto.ReportProgress(ctx, p.text, p.fraction)
	}
	if b.Exclusive {
		time.Sleep(100 * time.Millisecond)
		handlers.Lock()
		alone := aloneAtStart && handlers.running == 1 && handlers.started == started
		handlers.Unlock()
		if !alone {
			return errors.New("overlapped")
		}
	}
	return nil
}

// meet counts a handler of group as started and waits until count of them have, 10 s at
// most; false when they did not.
func meet(group string, count int) bool {
	handlers.Lock()
	defer handlers.Unlock()
	handlers.groups[group]++
	handlers.cond.Broadcast()
	deadline := time.AfterFunc(10*time.Second, func() {
		handlers.Lock()
		handlers.cond.Broadcast()
		handlers.Unlock()
	})
	defer deadline.Stop()
	start := time.Now()
	for handlers.groups[group] < count {
		if time.Since(start) >= 10*time.Second {
			return false
		}
		handlers.cond.Wait()
	}
	return true
}
