//! Ctrl-C for Lua code that runs: an extension's loop at load, in a tool handler, a command or
//! an ext.on subscriber. The thread that cancels (print mode's SIGINT watcher, the interactive
//! mode's key reader) may not touch the Lua state, so `request` sends SIGURG to the host's
//! thread; there, as lua.c does on SIGINT, the signal handler arms a count hook on the Lua
//! thread that runs (a tool handler's coroutine, else the main state), and the hook raises
//! "interrupted" in the running code, which fails as for any error: the load is reported and
//! dropped, the command reported, the tool call given an error result, and the turn canceled.
//! SIGURG is ignored by default: a stray one does nothing.
//!
//! A coroutine the running code made itself and resumes is not reached (the hook is on the
//! thread the host resumed).
const std = @import("std");
const c = @import("c");
const tool_runs = @import("panto_lua").embed.tool_runs;

const State = ?*c.lua_State;

/// The host's thread and its Lua state, the round whose handler coroutine may run, and how
/// deep the host is in calls into Lua (0: no Lua runs, nothing is armed; read by `request`
/// from another thread, so that no signal interrupts the system calls of a turn that runs no
/// Lua).
var host_thread: std.c.pthread_t = undefined;
var main_state: State = null;
var round: ?*const tool_runs.Round = null;
var depth: std.atomic.Value(u32) = .init(0);

const signal: std.posix.SIG = .URG;

/// Called on the host's thread once, with its state and its tool round.
pub fn install(L: State, r: *const tool_runs.Round) void {
    host_thread = std.c.pthread_self();
    main_state = L;
    round = r;
    const act: std.posix.Sigaction = .{
        .handler = .{ .handler = onSignal },
        .mask = std.posix.sigemptyset(),
        .flags = std.posix.SA.RESTART,
    };
    std.posix.sigaction(signal, &act, null);
}

/// The host is gone (before its state is closed).
pub fn uninstall() void {
    main_state = null;
    round = null;
}

/// From any thread: interrupt the Lua code that runs now, if any.
pub fn request() void {
    if (main_state == null or depth.load(.seq_cst) == 0) return;
    _ = std.c.pthread_kill(host_thread, signal);
}

/// The host calls into Lua (protect.call); `leave` when it returns. Once the outermost call
/// returns, a hook armed but not fired is taken off, so that it cannot fire in later code.
pub fn enter() void {
    _ = depth.fetchAdd(1, .seq_cst);
}

pub fn leave() void {
    if (depth.fetchSub(1, .seq_cst) != 1) return;
    disarm(main_state);
}

/// Takes our hook off `L` if it is armed there. Only ours: an extension's own debug.sethook
/// stays.
fn disarm(L: State) void {
    if (L == null) return;
    if (c.lua_gethook(L)) |current| if (current == &hook) c.lua_sethook(L, null, 0, 0);
}

/// The host waits in place for a child (ext.exec outside a tool handler): no Lua code runs, and
/// a cancel kills the child, whose outcome (`canceled`) the code then sees, as a tool handler
/// does. Returns what `unpause` puts back.
pub fn pause() u32 {
    const saved = depth.swap(0, .seq_cst);
    // A request that came between the child's start and this wait armed the hook; the cancel
    // kills the child too (Host.cancelAsync), so the code is to see `canceled`, not be
    // interrupted after ext.exec returns. The handler runs on this thread: it armed the hook
    // before the swap above, or it sees depth 0 and arms nothing.
    disarm(main_state);
    if (round) |r| disarm(r.running);
    return saved;
}

pub fn unpause(saved: u32) void {
    depth.store(saved, .seq_cst);
}

fn onSignal(_: std.posix.SIG) callconv(.c) void {
    if (depth.load(.seq_cst) == 0) return; // no Lua runs: the cancel reaches the turn by other ways
    const L = if (round) |r| r.running orelse main_state else main_state;
    c.lua_sethook(L, hook, c.LUA_MASKCALL | c.LUA_MASKRET | c.LUA_MASKLINE | c.LUA_MASKCOUNT, 1);
}

fn hook(L: State, _: [*c]c.lua_Debug) callconv(.c) void {
    c.lua_sethook(L, null, 0, 0);
    _ = c.luaL_error(L, "interrupted");
}
