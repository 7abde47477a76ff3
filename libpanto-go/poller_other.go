//go:build !linux

package panto

import (
	"errors"
	"sync/atomic"
	"time"
)

// poller: panto steps streams on Linux only (elsewhere panto_step_events refuses with
// PANTO_ERR_STATE and streams read by the blocking call), so no wait comes here.
type poller struct {
	waits atomic.Uint64 // always 0
}

func (p *poller) wait(fd int, write bool, timeout time.Duration, hasTimeout bool) error {
	return errors.New("panto: stepped streams wait on Linux only")
}

func (p *poller) interrupt() {}
