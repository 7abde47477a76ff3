//go:build linux

package panto

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// poller parks a goroutine in Go's network poller until what a stepped stream waits for
// (panto_step_events returned PANTO_WOULD_BLOCK) is there: no OS thread waits for it.
//
// The stream's descriptor is panto's: it cannot be handed to the netpoller itself (that
// needs O_NONBLOCK on the open file, which a dup shares, and a kept-alive connection may
// later be read by a blocking stream, for which EAGAIN is a bug). So each stream has an
// epoll instance of its own, which the netpoller watches: for each wait the stream's
// descriptor is added to it and removed after, never kept across waits (the descriptor may
// change between steps, and its number come back as another stream's socket). The deadline
// is the file's read deadline; a wait with no descriptor is the deadline alone.
type poller struct {
	mu          sync.Mutex // guards the fields below against interrupt, from any goroutine
	file        *os.File   // the epoll instance, made at the first wait; nil once closed
	conn        syscall.RawConn
	interrupted bool // interrupt was called since the last wait ended

	waits atomic.Uint64 // the waits begun (that the tests can tell a stream waited)
}

// wait parks until fd (if >= 0) is ready for reading or writing, the wait lasted `timeout`
// (if hasTimeout), or interrupt is called. One goroutine waits at a time (the one that holds
// the agent's call lock).
func (p *poller) wait(fd int, write bool, timeout time.Duration, hasTimeout bool) error {
	p.mu.Lock()
	if err := p.open(); err != nil {
		p.mu.Unlock()
		return err
	}
	if p.interrupted { // by a cancel after the step that asked for this wait
		p.interrupted = false
		p.mu.Unlock()
		return nil
	}
	deadline := time.Time{}
	if hasTimeout {
		deadline = time.Now().Add(timeout)
	}
	file, conn := p.file, p.conn
	p.waits.Add(1)
	// Under mu, so that an interrupt is either seen above or comes after and overrides it.
	if err := file.SetReadDeadline(deadline); err != nil {
		p.mu.Unlock()
		return err
	}
	p.mu.Unlock()

	epfd := int(file.Fd())
	if fd >= 0 {
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}
		if write {
			ev.Events = syscall.EPOLLOUT
		}
		if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
			return err
		}
		// Removed before the next step, which may close fd.
		defer syscall.EpollCtl(epfd, syscall.EPOLL_CTL_DEL, fd, nil)
	}
	var ready [1]syscall.EpollEvent
	err := conn.Read(func(uintptr) bool {
		for {
			n, err := syscall.EpollWait(epfd, ready[:], 0)
			if err != syscall.EINTR { // a readiness seen here is not seen again: never drop it
				return n > 0 || err != nil
			}
		}
	})
	p.mu.Lock()
	p.interrupted = false
	p.mu.Unlock()
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		return err
	}
	return nil // ready, the deadline, or interrupted: the next step tells which
}

// open makes the epoll instance, non-blocking so that the netpoller takes it. mu must be held.
func (p *poller) open() error {
	if p.file != nil {
		return nil
	}
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return os.NewSyscallError("epoll_create1", err)
	}
	if err := syscall.SetNonblock(epfd, true); err != nil {
		syscall.Close(epfd)
		return os.NewSyscallError("fcntl", err)
	}
	file := os.NewFile(uintptr(epfd), "panto-stream-wait")
	conn, err := file.SyscallConn()
	if err != nil {
		file.Close()
		return err
	}
	p.file, p.conn = file, conn
	return nil
}

// interrupt ends the wait in progress at once, or the next one if none runs (a cancel that
// came after the step that asked for it). Any goroutine.
func (p *poller) interrupt() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.interrupted = true
	if p.file != nil {
		_ = p.file.SetReadDeadline(time.Unix(1, 0))
	}
}

// close closes the epoll instance; no wait may run.
func (p *poller) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.file != nil {
		p.file.Close()
		p.file, p.conn = nil, nil
	}
}
