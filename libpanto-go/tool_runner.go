package panto

import (
	"context"
	"math"
	"sync"
)

// toolRunner runs the host tool calls of a turn that have a Handler, each on a goroutine of
// its own: every call of a message that is not Sequential at once, a Sequential one alone
// (after the calls before it finished, before those after it start). The handlers only
// record their results and progress here; the goroutine reading the stream (Next) hands
// them to the library, as they come, and the library sends the results in call order.
//
// It holds no reference to the Stream, so that a forgotten stream can be collected while a
// handler runs; the stream's cleanup cancels the handlers.
type toolRunner struct {
	mu       sync.Mutex
	calls    []*hostCall    // the calls whose result is not given yet, in call order
	progress []progressNote // reported, not forwarded yet
	ended    bool           // the turn is over: nothing starts, results are dropped
	wake     chan struct{}  // capacity 1: a result or progress came
}

// hostCall is a tool call the stream runs with its tool's Handler.
type hostCall struct {
	id, input  string
	tool       Tool
	sequential bool

	started  bool
	finished bool // res is ready
	res      toolResult
	cancel   context.CancelFunc // of the handler's context, once started
}

// progressNote is a ReportProgress to forward.
type progressNote struct {
	id, text string
	fraction float64
}

func newToolRunner() *toolRunner { return &toolRunner{wake: make(chan struct{}, 1)} }

// add records a call announced by a ToolCallStart; it starts at the next launch.
func (r *toolRunner) add(id, input string, t Tool, sequential bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, &hostCall{id: id, input: input, tool: t, sequential: sequential})
}

// launch starts the calls that may start, with contexts derived from ctx.
func (r *toolRunner) launch(ctx context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return
	}
	busy := false // a call before this one has not finished
	for _, c := range r.calls {
		if c.sequential {
			if !busy && !c.started {
				r.start(ctx, c)
			}
			return // nothing after it starts before it finished
		}
		if !c.started {
			r.start(ctx, c)
		}
		busy = busy || !c.finished
	}
}

// start runs c's handler on a goroutine. r.mu must be held.
func (r *toolRunner) start(ctx context.Context, c *hostCall) {
	cctx, cancel := context.WithCancel(ctx)
	c.started, c.cancel = true, cancel
	cctx = context.WithValue(cctx, progressKey{}, &progressReporter{runner: r, id: c.id})
	go func() {
		res := runHandler(cctx, c.tool, c.input)
		cancel()
		r.mu.Lock()
		c.res, c.finished = res, true
		r.mu.Unlock()
		r.signal()
	}()
}

func (r *toolRunner) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// pending says whether a call of the runner awaits its result.
func (r *toolRunner) pending() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.ended && len(r.calls) > 0
}

// take removes and returns the progress to forward and the finished calls, in that order of
// forwarding: a tool's progress comes before its result.
func (r *toolRunner) take() ([]progressNote, []*hostCall) {
	r.mu.Lock()
	defer r.mu.Unlock()
	notes := r.progress
	r.progress = nil
	var done []*hostCall
	kept := r.calls[:0]
	for _, c := range r.calls {
		if c.finished {
			done = append(done, c)
		} else {
			kept = append(kept, c)
		}
	}
	clear(r.calls[len(kept):])
	r.calls = kept
	return notes, done
}

// answered forgets the call id, which the program answered with SubmitToolResult: it does
// not start, or its result is dropped.
func (r *toolRunner) answered(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, c := range r.calls {
		if c.id == id {
			if c.cancel != nil {
				c.cancel()
			}
			r.calls = append(r.calls[:i], r.calls[i+1:]...)
			return
		}
	}
}

// end cancels the running handlers' contexts and drops every call: the turn is over.
func (r *toolRunner) end() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = true
	for _, c := range r.calls {
		if c.cancel != nil {
			c.cancel()
		}
	}
	r.calls, r.progress = nil, nil
}

// restart lets a reopened turn run its calls again.
func (r *toolRunner) restart() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = false
}

// report queues a progress note of the call id while it runs.
func (r *toolRunner) report(id, text string, fraction float64) {
	r.mu.Lock()
	running := false
	for _, c := range r.calls {
		running = running || (c.id == id && c.started && !c.finished)
	}
	if running && !r.ended {
		r.progress = append(r.progress, progressNote{id: id, text: text, fraction: fraction})
	}
	r.mu.Unlock()
	if running {
		r.signal()
	}
}

type progressKey struct{}

// progressReporter is what the context of a handler carries for ReportProgress.
type progressReporter struct {
	runner *toolRunner
	id     string
}

// ReportProgress reports the progress of the tool whose Handler received ctx: the stream
// yields it as an EventToolProgress while the tool runs. text may be empty; fraction is how
// far the tool is, 0 to 1, or negative for none (NaN and values above 1 are sent as none).
// It never blocks, and does nothing outside a Handler or once the handler returned.
func ReportProgress(ctx context.Context, text string, fraction float64) {
	if ctx == nil {
		return
	}
	p, ok := ctx.Value(progressKey{}).(*progressReporter)
	if !ok {
		return
	}
	if math.IsNaN(fraction) || fraction > 1 || fraction < 0 {
		fraction = -1
	}
	p.runner.report(p.id, text, fraction)
}
