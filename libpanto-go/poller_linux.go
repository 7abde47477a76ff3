//go:build linux

package panto

import (
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// poller parks a goroutine until what a stepped stream waits for (panto_step_events returned
// PANTO_WOULD_BLOCK) is there, the way Go's network poller parks a net.Conn's reader: no OS
// thread waits for it.
//
// The stream's descriptor is panto's: it cannot be handed to the netpoller itself (that
// needs O_NONBLOCK on the open file, which a dup shares, and a kept-alive connection may
// later be read by a blocking stream, for which EAGAIN is a bug). So the waits go through one
// epoll instance of the process (the reactor), which the netpoller watches: each wait adds
// the stream's descriptor to it, one-shot, and removes it after, never keeping it across
// waits (the descriptor may change between steps, and its number come back as another
// stream's socket). The deadline is a timer; a wait with no descriptor is the timer alone.
type poller struct {
	ready       chan struct{} // the reactor saw the descriptor ready (capacity 1)
	interrupted chan struct{} // interrupt was called (capacity 1)
	once        sync.Once

	waits atomic.Uint64 // the waits begun (that the tests can tell a stream waited)
}

func (p *poller) init() {
	p.once.Do(func() {
		p.ready = make(chan struct{}, 1)
		p.interrupted = make(chan struct{}, 1)
	})
}

// wait parks until fd (if >= 0) is ready for reading or writing, the wait lasted `timeout`
// (if hasTimeout), or interrupt is called, which also ends the next wait at once when called
// between two (a cancel after the step that asked for this wait). One goroutine waits at a
// time (the one that holds the agent's call lock).
func (p *poller) wait(fd int, write bool, timeout time.Duration, hasTimeout bool) error {
	p.init()
	p.waits.Add(1)
	select { // a readiness left from the last wait (it ended otherwise) is not this one's
	case <-p.ready:
	default:
	}
	if fd >= 0 {
		token, err := reactor.add(fd, write, p.ready)
		if err != nil {
			return err
		}
		defer reactor.remove(fd, token) // before the next step, which may close fd
	}
	var expired <-chan time.Time
	if hasTimeout {
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		expired = timer.C
	}
	select {
	case <-p.ready:
	case <-expired:
	case <-p.interrupted:
	}
	return nil // ready, the deadline, or interrupted: the next step tells which
}

// interrupt ends the wait in progress at once, or the next one if none runs. Any goroutine.
func (p *poller) interrupt() {
	p.init()
	select {
	case p.interrupted <- struct{}{}:
	default:
	}
}

// reactor is the process's epoll instance for the waits of stepped streams. Its goroutine
// parks in the netpoller on it, reads what is ready and signals the waits; it runs while
// waits are registered, and exits when the last one is removed (nothing outlives the waits).
var reactor pollReactor

type pollReactor struct {
	mu      sync.Mutex
	file    *os.File // the epoll instance, made at the first wait
	conn    syscall.RawConn
	running bool                      // its goroutine runs
	waiters map[int32]chan<- struct{} // the registered waits, by token (the event's data)
	next    int32
}

// add registers fd, one-shot, for reading or writing: ready is signaled when it is.
func (r *pollReactor) add(fd int, write bool, ready chan<- struct{}) (int32, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.open(); err != nil {
		return 0, err
	}
	for { // a token no registered wait has
		r.next++
		if _, taken := r.waiters[r.next]; !taken {
			break
		}
	}
	token := r.next
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLONESHOT, Fd: token}
	if write {
		ev.Events = syscall.EPOLLOUT | syscall.EPOLLONESHOT
	}
	if err := syscall.EpollCtl(int(r.file.Fd()), syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return 0, os.NewSyscallError("epoll_ctl", err)
	}
	r.waiters[token] = ready
	if !r.running {
		r.running = true
		_ = r.file.SetReadDeadline(time.Time{})
		go r.run()
	}
	return token, nil
}

// remove unregisters a wait; the last one makes the goroutine exit.
func (r *pollReactor) remove(fd int, token int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_ = syscall.EpollCtl(int(r.file.Fd()), syscall.EPOLL_CTL_DEL, fd, nil)
	delete(r.waiters, token)
	if len(r.waiters) == 0 {
		_ = r.file.SetReadDeadline(time.Unix(1, 0)) // wakes the goroutine, which exits
	}
}

// open makes the epoll instance, non-blocking so that the netpoller takes it. mu must be held.
func (r *pollReactor) open() error {
	if r.file != nil {
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
	file := os.NewFile(uintptr(epfd), "panto-stream-waits")
	conn, err := file.SyscallConn()
	if err != nil {
		file.Close()
		return err
	}
	r.file, r.conn, r.waiters = file, conn, make(map[int32]chan<- struct{})
	return nil
}

// run signals the waits whose descriptor is ready, while any is registered.
func (r *pollReactor) run() {
	epfd := int(r.file.Fd())
	var events [128]syscall.EpollEvent
	for {
		_ = r.conn.Read(func(uintptr) bool {
			n, err := syscall.EpollWait(epfd, events[:], 0)
			for err == syscall.EINTR { // a readiness seen here is not seen again: never drop it
				n, err = syscall.EpollWait(epfd, events[:], 0)
			}
			if n <= 0 {
				return err != nil
			}
			r.mu.Lock()
			for _, ev := range events[:n] {
				if ready, ok := r.waiters[ev.Fd]; ok {
					select {
					case ready <- struct{}{}:
					default:
					}
				}
			}
			r.mu.Unlock()
			return true
		})
		r.mu.Lock()
		if len(r.waiters) == 0 {
			r.running = false
			r.mu.Unlock()
			return
		}
		_ = r.file.SetReadDeadline(time.Time{}) // woken to exit, but a wait came meanwhile
		r.mu.Unlock()
	}
}
