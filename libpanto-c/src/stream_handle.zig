//! The object behind `PantoStream*`: the core stream, the detail of the last stream call that
//! failed, and the gate that lets panto_stream_free run on any thread, also while another
//! thread is in panto_next_event(s) of the stream.
//!
//! The gate is one word. The thread reading events sets `in_call` as a call starts (a plain
//! store: it alone writes that bit) and swaps the word to 0 as the call ends: one uncontended
//! atomic a call, the only one on the per-event path. panto_stream_free cancels the turn (a
//! blocked read returns at once), then sets `freed`: if a call is in progress, that call's
//! end sees `freed`, releases the stream and returns PANTO_ERR_CANCELED; otherwise free
//! releases it itself. Either way exactly one thread releases, after the last call returned.
//! (A call that had already taken its events from the core when the free came returns
//! CANCELED all the same; the message keeps those events, as a cancel just after them would.)
//! A call that only begins while free runs is the caller's race, as with any use after free.
const std = @import("std");
const panto = @import("panto");
const abi = @import("abi.zig");
const CallError = @import("call_error.zig").CallError;

const gpa = std.heap.c_allocator;

pub const StreamHandle = struct {
    stream: *panto.Stream,
    call_error: CallError = .{},
    gate: std.atomic.Value(u32) = .init(0),
    /// panto_stream_withdraw_queued's last answer (JSON), under `withdraw_lock`: the call may
    /// come from another thread than the reader's, as panto_stream_steer does.
    withdrawn: std.ArrayList(u8) = .empty,
    withdraw_lock: std.c.pthread_mutex_t = std.c.PTHREAD_MUTEX_INITIALIZER,

    const in_call: u32 = 1;
    const freed: u32 = 2;

    pub fn create(stream: *panto.Stream) error{OutOfMemory}!*StreamHandle {
        const h = try gpa.create(StreamHandle);
        h.* = .{ .stream = stream };
        return h;
    }

    pub fn setError(h: *StreamHandle, status: abi.Status, message: []const u8) c_int {
        return h.call_error.set(status, message);
    }

    /// A next call failed: the turn's failure is now the most recent (its detail is on the
    /// core stream); or it returned RESULT_PENDING, which changes nothing; or the stream is
    /// stepped (PANTO_ERR_STATE, the stream unchanged).
    pub fn nextFailed(h: *StreamHandle, err: anytype) c_int {
        return switch (err) {
            error.ResultPending => @intFromEnum(abi.Status.result_pending), // (not a failure)
            error.ApprovalPending => @intFromEnum(abi.Status.approval_pending), // (not a failure)
            error.Usage => h.setError(.state, "the stream is driven by panto_step_event(s): panto_next_event(s) and panto_stream_final_* read it only once its turn is over"),
            else => |e| h.turnFailed(e),
        };
    }

    /// A step call failed: as a next call, but for a stream read by next() already
    /// (PANTO_ERR_STATE, unchanged) and a platform without fibers.
    pub fn stepFailed(h: *StreamHandle, err: panto.stream_step.StepError) c_int {
        return switch (err) {
            error.ResultPending => @intFromEnum(abi.Status.result_pending), // (not a failure)
            error.ApprovalPending => @intFromEnum(abi.Status.approval_pending), // (not a failure)
            error.Usage => h.setError(.state, "the stream is read by panto_next_event(s): a stream is stepped or read, never both"),
            error.Unsupported => h.setError(.state, "panto_step_event(s) needs Linux on x86_64, aarch64 or riscv64"),
            else => |e| h.turnFailed(e),
        };
    }

    fn turnFailed(h: *StreamHandle, err: panto.TurnError) c_int {
        _ = h.call_error.clear();
        return @intFromEnum(abi.Status.fromTurnError(err));
    }

    /// A next call starts.
    pub inline fn enter(h: *StreamHandle) void {
        h.gate.store(in_call, .monotonic);
    }

    /// A next call ends with `status`, or, when the stream was freed meanwhile, releases it
    /// and returns PANTO_ERR_CANCELED (what it read is not the caller's any more).
    pub inline fn leave(h: *StreamHandle, status: c_int) c_int {
        if (h.gate.swap(0, .acq_rel) & freed != 0) return h.releaseAfterCall();
        return status;
    }

    noinline fn releaseAfterCall(h: *StreamHandle) c_int {
        h.release();
        return @intFromEnum(abi.Status.canceled);
    }

    /// panto_stream_withdraw_queued: what the stream has not taken yet of the steers and
    /// follow-ups queued, taken back, as a JSON array of {"source", "text"} in `withdrawn`.
    pub fn withdraw(h: *StreamHandle) error{OutOfMemory}![]const u8 {
        _ = std.c.pthread_mutex_lock(&h.withdraw_lock);
        defer _ = std.c.pthread_mutex_unlock(&h.withdraw_lock);
        const core_gpa = h.stream.agent.gpa;
        var taken: std.ArrayList(panto.Stream.Queued) = .empty;
        defer {
            for (taken.items) |m| core_gpa.free(m.text);
            taken.deinit(core_gpa);
        }
        try h.stream.withdrawQueued(&taken);
        h.withdrawn.clearRetainingCapacity();
        var out: std.Io.Writer.Allocating = .fromArrayList(gpa, &h.withdrawn);
        defer h.withdrawn = out.toArrayList();
        const w = &out.writer;
        w.writeByte('[') catch return error.OutOfMemory;
        for (taken.items, 0..) |m, i| {
            if (i > 0) w.writeByte(',') catch return error.OutOfMemory;
            w.print("{{\"source\":\"{t}\",\"text\":{f}}}", .{ m.source, std.json.fmt(m.text, .{}) }) catch return error.OutOfMemory;
        }
        w.writeByte(']') catch return error.OutOfMemory;
        return out.written();
    }

    /// panto_stream_free: from any thread (see the top of this file).
    pub fn free(h: *StreamHandle) void {
        h.stream.cancel();
        if (h.gate.fetchOr(freed, .acq_rel) & in_call != 0) return; // its leave() releases
        h.release();
    }

    /// Ends the turn by the close policy (Stream.close) and frees everything.
    fn release(h: *StreamHandle) void {
        h.stream.close();
        h.call_error.deinit();
        h.withdrawn.deinit(gpa);
        gpa.destroy(h);
    }
};
