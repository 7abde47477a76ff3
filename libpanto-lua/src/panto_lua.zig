//! The Lua 5.4 module `panto`: a Lua C module written in Zig on top of panto's C ABI
//! (include/panto.h). libpanto-lua/README.md documents the Lua API.
//!
//! Lua raises errors with longjmp, which skips Zig `defer`s and any cleanup a Zig frame would
//! do after the call that raised. So no function here holds a resource that only a Zig frame
//! knows about across a Lua call that can raise (argument checks, lua_push* when memory runs
//! out, lua_error): every C handle goes into its userdata, whose __gc frees it, the moment it
//! exists, and the Zig memory of JSON encoding and decoding lives in boxes (userdata with a
//! __gc) on the Lua stack. Zig frames that raise hold only stack buffers.

const std = @import("std");
const c = @import("c"); // lua.h, lauxlib.h and panto.h, translated by build.zig

comptime {
    // Compiles the C ABI into this module: the extern functions of panto.h bind to its exports.
    _ = @import("panto_c");
}

/// The C ABI's (no thread-local signal stack: see libpanto-c/src/root.zig).
pub const std_options = @import("panto_c").std_options;

const State = ?*c.lua_State;
const gpa = std.heap.c_allocator;

const agent_tname: [*:0]const u8 = "panto.Agent";
const stream_tname: [*:0]const u8 = "panto.Stream";
const error_tname: [*:0]const u8 = "panto.Error";
const registry_tname: [*:0]const u8 = "panto.Registry";
/// The metatable of decoded JSON arrays (and of tables marked with panto.array), so that an
/// empty one encodes back as `[]`.
const array_tname: [*:0]const u8 = "panto.array";
/// Internal boxes: Zig memory owned by a userdata, freed by its __gc if a Lua error skips the
/// explicit free.
const writer_tname: [*:0]const u8 = "panto.JsonWriter";
const arena_tname: [*:0]const u8 = "panto.JsonArena";

/// User value slots.
const uv_agent_handlers = 1; // agent: table tool name -> handler function
const uv_stream_agent = 1; // stream: the agent userdata, kept alive while the stream is
const uv_stream_error = 2; // stream: the error table of a failed turn, raised again by next()
const uv_stream_pending = 3; // stream: the tool call to run before the next event
const uv_registry_tools = 1; // registry: the sequence of tool tables

/// Indices in a pending call table.
const pending_id = 1;
const pending_name = 2;
const pending_event = 3;
const pending_handler = 4;

/// JSON null in Lua: a light userdata, panto.null.
var null_sentinel: u8 = 0;

/// Nesting limit of JSON values, both ways (a deeper table is likely a cycle).
const max_depth = 200;

// ---- Userdata ---------------------------------------------------------------------------

const Agent = struct {
    handle: ?*c.PantoAgent,
    /// The agent's streams that still hold a C handle, so that closing the agent frees them
    /// first (panto.h: an agent's streams must be freed before the agent).
    streams: ?*Stream,
};

const Phase = enum(u8) {
    /// Holds a C handle; the turn has not ended.
    open,
    /// The turn ended: next() returns nil. The C handle is already freed.
    done,
    /// The turn failed: next() raises the error in user value 2. The C handle stays, for
    /// reopen(), until the stream is closed.
    failed,
    /// Closed by close(), `__close`, `__gc` or the agent's close().
    closed,
};

const Stream = struct {
    handle: ?*c.PantoStream,
    phase: Phase,
    /// Whether next() runs the handlers of awaited tool calls itself.
    run_tools: bool,
    /// Set while `handle` is: the agent whose list links this stream.
    agent: ?*Agent,
    prev: ?*Stream,
    next: ?*Stream,
    /// The armed cancel_after() timer, if any.
    timer: ?*Timer,
    /// User value 3 may hold a pending tool call (set with it): next() looks only then.
    may_have_pending: bool = false,
};

// ---- stream:cancel_after(ms): a one-shot timer thread ------------------------------------

/// Calls panto_stream_cancel (thread-safe, include/panto.h) from its own OS thread when its
/// deadline passes, so that a next() blocked in the Lua thread returns. The stream's owner
/// disarms it (under the mutex, then joins the thread) before the stream can be freed, so the
/// thread never touches a freed stream and never outlives the Timer.
const Timer = struct {
    mutex: c.pthread_mutex_t,
    cond: c.pthread_cond_t,
    /// The stream to cancel; null once fired or disarmed.
    target: ?*c.PantoStream,
    /// CLOCK_MONOTONIC, the clock `cond` waits on.
    deadline: c.struct_timespec,
    thread: std.Thread,

    fn run(t: *Timer) void {
        _ = c.pthread_mutex_lock(&t.mutex);
        defer _ = c.pthread_mutex_unlock(&t.mutex);
        while (t.target) |h| {
            var now: c.struct_timespec = undefined;
            _ = c.clock_gettime(c.CLOCK_MONOTONIC, &now);
            if (now.tv_sec > t.deadline.tv_sec or (now.tv_sec == t.deadline.tv_sec and now.tv_nsec >= t.deadline.tv_nsec)) {
                _ = c.panto_stream_cancel(h);
                t.target = null;
                return;
            }
            // Woken early by disarm(), or spuriously: the loop decides.
            _ = c.pthread_cond_timedwait(&t.cond, &t.mutex, &t.deadline);
        }
    }
};

/// Starts a timer that cancels `h` after `ms`. Null when the system refuses a thread.
fn armTimer(h: *c.PantoStream, ms: f64) ?*Timer {
    const t = gpa.create(Timer) catch return null;
    t.target = h;
    var attr: c.pthread_condattr_t = undefined;
    _ = c.pthread_condattr_init(&attr);
    _ = c.pthread_condattr_setclock(&attr, c.CLOCK_MONOTONIC);
    _ = c.pthread_cond_init(&t.cond, &attr);
    _ = c.pthread_condattr_destroy(&attr);
    _ = c.pthread_mutex_init(&t.mutex, null);
    _ = c.clock_gettime(c.CLOCK_MONOTONIC, &t.deadline);
    // ms is finite and at most max_cancel_after_ms: the sum fits.
    const total_ns: u64 = @as(u64, @intCast(t.deadline.tv_nsec)) + @as(u64, @intFromFloat(ms * std.time.ns_per_ms));
    t.deadline.tv_sec += @intCast(total_ns / std.time.ns_per_s);
    t.deadline.tv_nsec = @intCast(total_ns % std.time.ns_per_s);
    // Little stack: the thread only waits and calls panto_stream_cancel.
    t.thread = std.Thread.spawn(.{ .stack_size = 128 * 1024 }, Timer.run, .{t}) catch {
        destroyTimer(t);
        return null;
    };
    return t;
}

fn destroyTimer(t: *Timer) void {
    _ = c.pthread_cond_destroy(&t.cond);
    _ = c.pthread_mutex_destroy(&t.mutex);
    gpa.destroy(t);
}

/// Stops the stream's timer (if it has not fired, it never will) and waits for its thread,
/// which returns at once.
fn disarmTimer(s: *Stream) void {
    const t = s.timer orelse return;
    s.timer = null;
    _ = c.pthread_mutex_lock(&t.mutex);
    t.target = null;
    _ = c.pthread_cond_signal(&t.cond);
    _ = c.pthread_mutex_unlock(&t.mutex);
    t.thread.join();
    destroyTimer(t);
}

/// The longest delay stream:cancel_after takes: 30 days.
const max_cancel_after_ms: f64 = 30 * 24 * 3600 * 1000;

fn toAgent(L: State, idx: c_int) *Agent {
    return @ptrCast(@alignCast(c.luaL_checkudata(L, idx, agent_tname).?));
}

fn toStream(L: State, idx: c_int) *Stream {
    return @ptrCast(@alignCast(c.luaL_checkudata(L, idx, stream_tname).?));
}

fn checkOpenAgent(L: State, idx: c_int) *Agent {
    const a = toAgent(L, idx);
    if (a.handle == null) _ = c.luaL_error(L, "attempt to use a closed %s", agent_tname);
    return a;
}

/// Frees the stream's C handle, if it holds one, and unlinks it from its agent.
fn releaseStream(s: *Stream, phase: Phase) void {
    disarmTimer(s);
    if (s.handle) |h| {
        s.handle = null;
        c.panto_stream_free(h);
    }
    if (s.agent) |a| {
        if (s.prev) |p| p.next = s.next else a.streams = s.next;
        if (s.next) |n| n.prev = s.prev;
        s.agent = null;
        s.prev = null;
        s.next = null;
    }
    s.phase = phase;
}

fn closeAgent(a: *Agent) void {
    while (a.streams) |s| releaseStream(s, .closed);
    if (a.handle) |h| {
        a.handle = null;
        c.panto_agent_free(h);
    }
}

// ---- Small helpers ------------------------------------------------------------------------

fn slice(s: c.PantoString) []const u8 {
    if (s.len == 0 or s.ptr == null) return "";
    return s.ptr[0..s.len];
}

fn pushSlice(L: State, s: []const u8) void {
    _ = c.lua_pushlstring(L, s.ptr, s.len); // copies: borrowed C strings die at the next call
}

/// The string at `idx`, which must be a string (lua_tolstring would convert a number in place).
fn toSlice(L: State, idx: c_int) []const u8 {
    var len: usize = 0;
    const p = c.lua_tolstring(L, idx, &len);
    return p[0..len];
}

fn typeName(L: State, idx: c_int) []const u8 {
    return std.mem.span(c.lua_typename(L, c.lua_type(L, idx)));
}

fn pop(L: State, n: c_int) void {
    c.lua_settop(L, -n - 1);
}

fn setString(L: State, key: [*:0]const u8, s: []const u8) void {
    pushSlice(L, s);
    c.lua_setfield(L, -2, key);
}

fn setCString(L: State, key: [*:0]const u8, s: [*c]const u8) void {
    _ = c.lua_pushstring(L, s);
    c.lua_setfield(L, -2, key);
}

fn setInteger(L: State, key: [*:0]const u8, n: anytype) void {
    const v: c.lua_Integer = std.math.cast(c.lua_Integer, n) orelse std.math.maxInt(c.lua_Integer);
    c.lua_pushinteger(L, v);
    c.lua_setfield(L, -2, key);
}

fn setBoolean(L: State, key: [*:0]const u8, b: bool) void {
    c.lua_pushboolean(L, @intFromBool(b));
    c.lua_setfield(L, -2, key);
}

fn isNil(L: State, idx: c_int) bool {
    return c.lua_type(L, idx) == c.LUA_TNIL;
}

fn isNoneOrNil(L: State, idx: c_int) bool {
    return c.lua_type(L, idx) <= c.LUA_TNIL;
}

/// A function, or a value with a __call metamethod.
fn isCallable(L: State, idx: c_int) bool {
    if (c.lua_type(L, idx) == c.LUA_TFUNCTION) return true;
    if (c.luaL_getmetafield(L, idx, "__call") == c.LUA_TNIL) return false;
    pop(L, 1);
    return true;
}

fn pushNull(L: State) void {
    c.lua_pushlightuserdata(L, &null_sentinel);
}

fn isNull(L: State, idx: c_int) bool {
    return c.lua_type(L, idx) == c.LUA_TLIGHTUSERDATA and c.lua_touserdata(L, idx) == @as(*anyopaque, &null_sentinel);
}

/// Where a declaration error is, for its message: "tool 'get_weather': parameter 'city': ".
const Where = struct {
    parent: ?*const Where = null,
    label: []const u8,
    name: []const u8 = "",

    fn write(w: *const Where, out: *std.Io.Writer) void {
        if (w.parent) |p| p.write(out);
        if (w.name.len > 0)
            out.print("{s} '{s}': ", .{ w.label, w.name }) catch {}
        else
            out.print("{s}: ", .{w.label}) catch {};
    }
};

/// Raises a Lua error "<where>: <message>". Only a stack buffer is live in Zig frames here.
fn fail(L: State, where: ?*const Where, comptime fmt: []const u8, args: anytype) noreturn {
    var buf: [600]u8 = undefined;
    var w: std.Io.Writer = .fixed(buf[0 .. buf.len - 1]);
    if (where) |p| p.write(&w);
    w.print(fmt, args) catch {};
    const n = w.end;
    buf[n] = 0;
    _ = c.luaL_error(L, "%s", @as([*:0]const u8, buf[0..n :0].ptr));
    unreachable;
}

/// Pushes an error table {code, http_status, type, message, request_id} with the metatable
/// panto.Error. Absent details (HTTP status 0, empty strings) are left nil.
fn pushError(L: State, err: *const c.PantoError, fallback_code: c_int) void {
    const code = if (err.code != 0) err.code else fallback_code;
    c.lua_createtable(L, 0, 5);
    setCString(L, "code", c.panto_status_name(code));
    if (err.http_status != 0) setInteger(L, "http_status", err.http_status);
    const typ = slice(err.type);
    if (typ.len > 0) setString(L, "type", typ);
    const msg = slice(err.message);
    if (msg.len > 0) setString(L, "message", msg) else setCString(L, "message", c.panto_status_name(code));
    const rid = slice(err.request_id);
    if (rid.len > 0) setString(L, "request_id", rid);
    _ = c.lua_getfield(L, c.LUA_REGISTRYINDEX, error_tname);
    _ = c.lua_setmetatable(L, -2);
}

fn newError() c.PantoError {
    var err = std.mem.zeroes(c.PantoError);
    err.size = @sizeOf(c.PantoError);
    return err;
}

/// Pushes an error table with `code` and `message` alone.
fn pushSimpleError(L: State, code: c_int, message: []const u8) void {
    var err = newError();
    err.code = code;
    err.message = .{ .ptr = message.ptr, .len = message.len };
    pushError(L, &err, code);
}

/// Raises the agent's last error (after a failed panto_agent_run, say) as an error table.
fn raiseAgentError(L: State, a: *Agent, rc: c_int) noreturn {
    var err = newError();
    _ = c.panto_agent_error(a.handle, &err);
    pushError(L, &err, rc);
    _ = c.lua_error(L);
    unreachable;
}

/// The value at the top is the message of a refused declaration (raised by a protected
/// call): raises it as a panto.Error with code "config".
fn raiseConfigError(L: State) noreturn {
    if (c.lua_type(L, -1) != c.LUA_TSTRING) _ = c.lua_error(L); // not a message: as it is
    pushSimpleError(L, c.PANTO_ERR_CONFIG, toSlice(L, -1));
    _ = c.lua_error(L);
    unreachable;
}

/// Calls the C function `f` with the `nargs` values at the top, protected. Returns whether
/// it succeeded; the results (or the error value) are at the top.
fn protectedCall(L: State, f: c.lua_CFunction, nargs: c_int, nresults: c_int) bool {
    c.lua_pushcclosure(L, f, 0);
    c.lua_rotate(L, -nargs - 1, 1);
    return c.lua_pcallk(L, nargs, nresults, 0, 0, null) == c.LUA_OK;
}

// ---- JSON out: a growable buffer in a box -----------------------------------------------

const Writer = struct {
    list: std.ArrayList(u8),

    fn write(w: *Writer, L: State, bytes: []const u8) void {
        w.list.appendSlice(gpa, bytes) catch {
            _ = c.luaL_error(L, "not enough memory");
        };
    }
};

/// Pushes a new writer box and returns it.
fn newWriter(L: State) *Writer {
    const w: *Writer = @ptrCast(@alignCast(c.lua_newuserdatauv(L, @sizeOf(Writer), 0).?));
    w.* = .{ .list = .empty };
    c.luaL_setmetatable(L, writer_tname);
    return w;
}

fn writerGc(L: State) callconv(.c) c_int {
    const w: *Writer = @ptrCast(@alignCast(c.luaL_checkudata(L, 1, writer_tname).?));
    w.list.deinit(gpa);
    w.list = .empty;
    return 0;
}

/// Pushes what `w` holds as a string and frees its memory (the box stays where it is).
fn pushWritten(L: State, w: *Writer) void {
    pushSlice(L, w.list.items);
    w.list.deinit(gpa);
    w.list = .empty;
}

/// Writes `s` as a JSON string literal. Returns false when `s` is not UTF-8.
fn writeString(L: State, w: *Writer, s: []const u8) bool {
    if (!std.unicode.utf8ValidateSlice(s)) return false;
    const hex = "0123456789abcdef";
    w.write(L, "\"");
    var start: usize = 0;
    for (s, 0..) |ch, i| {
        const esc: ?u8 = switch (ch) {
            '"' => '"',
            '\\' => '\\',
            '\n' => 'n',
            '\r' => 'r',
            '\t' => 't',
            0x08 => 'b',
            0x0c => 'f',
            else => if (ch < 0x20) 'u' else null,
        };
        const e = esc orelse continue;
        w.write(L, s[start..i]);
        if (e == 'u') {
            const u = [_]u8{ '\\', 'u', '0', '0', hex[ch >> 4], hex[ch & 15] };
            w.write(L, &u);
        } else {
            w.write(L, &.{ '\\', e });
        }
        start = i + 1;
    }
    w.write(L, s[start..]);
    w.write(L, "\"");
    return true;
}

fn writeStringOrFail(L: State, w: *Writer, s: []const u8, where: ?*const Where, what: []const u8) void {
    if (!writeString(L, w, s)) fail(L, where, "{s} is not valid UTF-8", .{what});
}

fn writeNumber(L: State, w: *Writer, idx: c_int, where: ?*const Where) void {
    var buf: [64]u8 = undefined;
    var isint: c_int = 0;
    const i = c.lua_tointegerx(L, idx, &isint);
    if (c.lua_isinteger(L, idx) != 0 and isint != 0) {
        w.write(L, std.fmt.bufPrint(&buf, "{d}", .{i}) catch unreachable);
        return;
    }
    const f: f64 = c.lua_tonumberx(L, idx, null);
    if (!std.math.isFinite(f)) fail(L, where, "cannot encode {d} as JSON", .{f});
    const a = @abs(f);
    const text = if (a >= 1e21 or (a != 0 and a < 1e-6))
        std.fmt.bufPrint(&buf, "{e}", .{f}) catch unreachable
    else
        std.fmt.bufPrint(&buf, "{d}", .{f}) catch unreachable;
    w.write(L, text);
    // A float stays a float: 2.0 is "2.0", as in Python.
    if (std.mem.indexOfAny(u8, text, ".e") == null) w.write(L, ".0");
}

fn hasArrayMetatable(L: State, idx: c_int) bool {
    if (c.lua_getmetatable(L, idx) == 0) return false;
    _ = c.lua_getfield(L, c.LUA_REGISTRYINDEX, array_tname);
    const same = c.lua_rawequal(L, -1, -2) != 0;
    pop(L, 2);
    return same;
}

/// The length of the table at `idx` when it encodes as a JSON array: marked with panto.array,
/// or its keys are exactly 1..n with n >= 1. null: an object.
fn arrayLength(L: State, idx_: c_int) ?usize {
    const idx = c.lua_absindex(L, idx_);
    const raw: usize = @intCast(c.lua_rawlen(L, idx));
    if (hasArrayMetatable(L, idx)) return raw;
    var count: usize = 0;
    c.lua_pushnil(L);
    while (c.lua_next(L, idx) != 0) {
        var isint: c_int = 0;
        const k = c.lua_tointegerx(L, -2, &isint);
        if (c.lua_isinteger(L, -2) == 0 or k < 1 or @as(u64, @intCast(k)) > raw) {
            pop(L, 2);
            return null;
        }
        count += 1;
        pop(L, 1);
    }
    if (count == 0 or count != raw) return null;
    return raw;
}

/// Pushes a box holding the keys of the table at `idx`, sorted, and returns them. They point
/// into the table's key strings, alive while the table is unchanged and on the stack.
fn sortedKeys(L: State, idx_: c_int, where: ?*const Where, what: []const u8) []const []const u8 {
    const idx = c.lua_absindex(L, idx_);
    var n: usize = 0;
    c.lua_pushnil(L);
    while (c.lua_next(L, idx) != 0) {
        if (c.lua_type(L, -2) != c.LUA_TSTRING) {
            fail(L, where, "{s} must be strings, got a {s} key", .{ what, typeName(L, -2) });
        }
        n += 1;
        pop(L, 1);
    }
    const mem = c.lua_newuserdatauv(L, @max(n, 1) * @sizeOf([]const u8), 0).?;
    const keys: [*][]const u8 = @ptrCast(@alignCast(mem));
    var i: usize = 0;
    c.lua_pushnil(L);
    while (c.lua_next(L, idx) != 0) : (i += 1) {
        keys[i] = toSlice(L, -2);
        pop(L, 1);
    }
    const list = keys[0..n];
    std.mem.sort([]const u8, list, {}, struct {
        fn lt(_: void, a: []const u8, b: []const u8) bool {
            return std.mem.order(u8, a, b) == .lt;
        }
    }.lt);
    return list;
}

/// Writes the Lua value at `idx` as compact JSON: nil and panto.null are null; a table is an
/// array when arrayLength says so, else an object with string keys, written sorted.
fn writeValue(L: State, w: *Writer, idx_: c_int, depth: u32, where: ?*const Where) void {
    const idx = c.lua_absindex(L, idx_);
    switch (c.lua_type(L, idx)) {
        c.LUA_TNIL => w.write(L, "null"),
        c.LUA_TBOOLEAN => w.write(L, if (c.lua_toboolean(L, idx) != 0) "true" else "false"),
        c.LUA_TNUMBER => writeNumber(L, w, idx, where),
        c.LUA_TSTRING => writeStringOrFail(L, w, toSlice(L, idx), where, "a string"),
        c.LUA_TTABLE => {
            if (depth >= max_depth) fail(L, where, "cannot encode tables nested more than {d} deep (a cycle?)", .{max_depth});
            c.luaL_checkstack(L, 8, "tables nested too deeply");
            if (arrayLength(L, idx)) |n| {
                w.write(L, "[");
                for (1..n + 1) |i| {
                    if (i > 1) w.write(L, ",");
                    _ = c.lua_rawgeti(L, idx, @intCast(i));
                    writeValue(L, w, -1, depth + 1, where);
                    pop(L, 1);
                }
                w.write(L, "]");
            } else {
                const keys = sortedKeys(L, idx, where, "the keys of a JSON object");
                w.write(L, "{");
                for (keys, 0..) |k, i| {
                    if (i > 0) w.write(L, ",");
                    writeStringOrFail(L, w, k, where, "an object key");
                    w.write(L, ":");
                    pushSlice(L, k);
                    _ = c.lua_rawget(L, idx);
                    writeValue(L, w, -1, depth + 1, where);
                    pop(L, 1);
                }
                w.write(L, "}");
                pop(L, 1); // the keys
            }
        },
        else => {
            if (isNull(L, idx)) return w.write(L, "null");
            fail(L, where, "cannot encode a {s} as JSON", .{typeName(L, idx)});
        },
    }
}

/// panto.json_encode(value): compact JSON text; raises on what JSON cannot hold.
fn jsonEncode(L: State) callconv(.c) c_int {
    c.luaL_checkany(L, 1);
    c.lua_settop(L, 1);
    const w = newWriter(L);
    writeValue(L, w, 1, 0, null);
    pushWritten(L, w);
    return 1;
}

// ---- JSON in: std.json.Value -> Lua values ----------------------------------------------

const ArenaBox = struct {
    arena: std.heap.ArenaAllocator,
    live: bool,
};

fn arenaGc(L: State) callconv(.c) c_int {
    const box: *ArenaBox = @ptrCast(@alignCast(c.luaL_checkudata(L, 1, arena_tname).?));
    if (box.live) {
        box.live = false;
        box.arena.deinit();
    }
    return 0;
}

fn pushJsonValue(L: State, v: std.json.Value, depth: u32) void {
    if (depth >= max_depth) _ = c.luaL_error(L, "JSON nested more than %d deep", @as(c_int, max_depth));
    c.luaL_checkstack(L, 4, "JSON nested too deeply");
    switch (v) {
        .null => pushNull(L),
        .bool => |b| c.lua_pushboolean(L, @intFromBool(b)),
        .integer => |i| c.lua_pushinteger(L, i),
        .float => |f| c.lua_pushnumber(L, f),
        // An integer beyond 64 bits, or a float beyond f64: the nearest float.
        .number_string => |s| c.lua_pushnumber(L, std.fmt.parseFloat(f64, s) catch std.math.nan(f64)),
        .string => |s| pushSlice(L, s),
        .array => |arr| {
            c.lua_createtable(L, @intCast(@min(arr.items.len, std.math.maxInt(c_int))), 0);
            for (arr.items, 1..) |item, i| {
                pushJsonValue(L, item, depth + 1);
                c.lua_rawseti(L, -2, @intCast(i));
            }
            c.luaL_setmetatable(L, array_tname);
        },
        .object => |obj| {
            c.lua_createtable(L, 0, @intCast(@min(obj.count(), std.math.maxInt(c_int))));
            var it = obj.iterator();
            while (it.next()) |entry| {
                pushSlice(L, entry.key_ptr.*);
                pushJsonValue(L, entry.value_ptr.*, depth + 1);
                c.lua_rawset(L, -3);
            }
        },
    }
}

/// panto.json_decode(text): the value (objects as tables, arrays as sequences marked with
/// panto.array, null as panto.null). Raises on invalid JSON.
fn jsonDecode(L: State) callconv(.c) c_int {
    var len: usize = 0;
    const p = c.luaL_checklstring(L, 1, &len);
    c.lua_settop(L, 1);
    const box: *ArenaBox = @ptrCast(@alignCast(c.lua_newuserdatauv(L, @sizeOf(ArenaBox), 0).?));
    box.* = .{ .arena = .init(gpa), .live = true };
    c.luaL_setmetatable(L, arena_tname);
    const value = std.json.parseFromSliceLeaky(std.json.Value, box.arena.allocator(), p[0..len], .{}) catch |err| {
        box.live = false;
        box.arena.deinit();
        if (err == error.OutOfMemory) _ = c.luaL_error(L, "not enough memory");
        fail(L, null, "invalid JSON ({s})", .{@errorName(err)});
    };
    pushJsonValue(L, value, 0);
    box.live = false;
    box.arena.deinit();
    return 1;
}

/// panto.array(t): marks `t` (default: a new table) as a JSON array, so that it encodes as
/// one even when empty; returns it.
fn markArray(L: State) callconv(.c) c_int {
    if (isNoneOrNil(L, 1)) {
        c.lua_settop(L, 0);
        c.lua_createtable(L, 0, 0);
    }
    c.luaL_checktype(L, 1, c.LUA_TTABLE);
    c.lua_settop(L, 1);
    c.luaL_setmetatable(L, array_tname);
    return 1;
}

// ---- Tool declarations --------------------------------------------------------------------

const tool_keys = [_][]const u8{ "name", "description", "params", "schema", "capabilities", "handler" };
const param_keys = [_][]const u8{ "type", "description", "required", "default", "enum", "items", "params", "minimum", "maximum" };

fn keyList(comptime keys: []const []const u8) []const u8 {
    comptime {
        var s: []const u8 = "";
        for (keys, 0..) |k, i| s = s ++ (if (i == 0) "" else ", ") ++ k;
        return s;
    }
}

fn isOneOf(name: []const u8, comptime keys: []const []const u8) bool {
    inline for (keys) |k| if (std.mem.eql(u8, k, name)) return true;
    return false;
}

/// Refuses keys of the table at `idx` that are not in `keys`.
fn checkKeys(L: State, idx_: c_int, comptime keys: []const []const u8, where: ?*const Where) void {
    const idx = c.lua_absindex(L, idx_);
    c.lua_pushnil(L);
    while (c.lua_next(L, idx) != 0) {
        if (c.lua_type(L, -2) != c.LUA_TSTRING)
            fail(L, where, "keys must be strings, got a {s} key", .{typeName(L, -2)});
        const k = toSlice(L, -2);
        if (!isOneOf(k, keys)) fail(L, where, "unknown key '{s}' (the keys are " ++ keyList(keys) ++ ")", .{k});
        pop(L, 1);
    }
}

/// Pushes t[key] (raw) and returns its type.
fn field(L: State, t_: c_int, key: [*:0]const u8) c_int {
    const t = c.lua_absindex(L, t_);
    _ = c.lua_pushstring(L, key);
    return c.lua_rawget(L, t);
}

/// The rule of panto's core (libpanto/src/tools.zig): 1 to 64 letters, digits, '_' or '-'.
fn validToolName(name: []const u8) bool {
    if (name.len == 0 or name.len > 64) return false;
    for (name) |ch| if (!(std.ascii.isAlphanumeric(ch) or ch == '_' or ch == '-')) return false;
    return true;
}

/// Writes the list of strings at `idx` (a sequence; empty is allowed) as a JSON array.
fn writeStringList(L: State, w: *Writer, idx_: c_int, where: ?*const Where, what: []const u8) void {
    const idx = c.lua_absindex(L, idx_);
    if (c.lua_type(L, idx) != c.LUA_TTABLE) fail(L, where, "{s} must be a list of strings, got a {s}", .{ what, typeName(L, idx) });
    const n: usize = @intCast(c.lua_rawlen(L, idx));
    var count: usize = 0;
    c.lua_pushnil(L);
    while (c.lua_next(L, idx) != 0) {
        count += 1;
        pop(L, 1);
    }
    if (count != n) fail(L, where, "{s} must be a list of strings (a sequence)", .{what});
    w.write(L, "[");
    for (1..n + 1) |i| {
        if (i > 1) w.write(L, ",");
        if (c.lua_rawgeti(L, idx, @intCast(i)) != c.LUA_TSTRING)
            fail(L, where, "{s} must be a list of strings, got a {s} in it", .{ what, typeName(L, -1) });
        writeStringOrFail(L, w, toSlice(L, -1), where, what);
        pop(L, 1);
    }
    w.write(L, "]");
}

const ParamType = enum { string, integer, number, boolean, array, object };

/// Whether the value at `idx` is a `t`.
fn hasType(L: State, idx: c_int, t: ParamType) bool {
    return switch (t) {
        .string => c.lua_type(L, idx) == c.LUA_TSTRING,
        .number => c.lua_type(L, idx) == c.LUA_TNUMBER,
        .integer => c.lua_type(L, idx) == c.LUA_TNUMBER and blk: {
            var isint: c_int = 0;
            _ = c.lua_tointegerx(L, idx, &isint);
            break :blk isint != 0;
        },
        .boolean => c.lua_type(L, idx) == c.LUA_TBOOLEAN,
        .array => c.lua_type(L, idx) == c.LUA_TTABLE and (arrayLength(L, idx) != null or emptyTable(L, idx)),
        .object => c.lua_type(L, idx) == c.LUA_TTABLE and arrayLength(L, idx) == null,
    };
}

fn emptyTable(L: State, idx_: c_int) bool {
    const idx = c.lua_absindex(L, idx_);
    c.lua_pushnil(L);
    if (c.lua_next(L, idx) == 0) return true;
    pop(L, 2);
    return false;
}

fn writeTypedValue(L: State, w: *Writer, idx: c_int, t: ParamType, where: *const Where, what: []const u8) void {
    if (!hasType(L, idx, t)) fail(L, where, "{s} must be a{s} {s}, got a {s}", .{ what, if (t == .integer or t == .array or t == .object) "n" else "", @tagName(t), typeName(L, idx) });
    if (t == .array and arrayLength(L, idx) == null) return w.write(L, "[]"); // an empty table
    writeValue(L, w, idx, 0, where);
}

/// Whether the parameter spec at `idx` (already checked) is required.
fn paramRequired(L: State, idx: c_int) bool {
    if (c.lua_type(L, idx) != c.LUA_TTABLE) return true; // a type name
    const t = field(L, idx, "required");
    const explicit = c.lua_toboolean(L, -1) != 0;
    pop(L, 1);
    if (t == c.LUA_TBOOLEAN) return explicit;
    const has_default = field(L, idx, "default") != c.LUA_TNIL;
    pop(L, 1);
    return !has_default;
}

/// Writes `"properties":{...}` and, when some are required, `,"required":[...]` for the table
/// name -> parameter spec at `idx`.
fn writeProperties(L: State, w: *Writer, idx_: c_int, where: *const Where) void {
    const idx = c.lua_absindex(L, idx_);
    const names = sortedKeys(L, idx, where, "parameter names"); // pushes a box
    w.write(L, "\"properties\":{");
    for (names, 0..) |name, i| {
        if (i > 0) w.write(L, ",");
        const pw: Where = .{ .parent = where, .label = "parameter", .name = name };
        writeStringOrFail(L, w, name, &pw, "the name");
        w.write(L, ":");
        pushSlice(L, name);
        _ = c.lua_rawget(L, idx);
        writeParam(L, w, -1, &pw, true);
        pop(L, 1);
    }
    w.write(L, "}");
    var first = true;
    for (names) |name| {
        pushSlice(L, name);
        _ = c.lua_rawget(L, idx);
        const required = paramRequired(L, -1);
        pop(L, 1);
        if (!required) continue;
        w.write(L, if (first) ",\"required\":[" else ",");
        first = false;
        _ = writeString(L, w, name);
    }
    if (!first) w.write(L, "]");
    pop(L, 1); // the names
}

/// Writes the JSON Schema of one parameter spec: a type name, or a table {type=, description=,
/// required=, default=, enum=, items=, params=, minimum=, maximum=}. `top`: a parameter of
/// the tool or an object (required and default mean something), else array items.
fn writeParam(L: State, w: *Writer, idx_: c_int, where: *const Where, top: bool) void {
    const idx = c.lua_absindex(L, idx_);
    c.luaL_checkstack(L, 8, "parameters nested too deeply");
    const types = "string, integer, number, boolean, array or object";
    if (c.lua_type(L, idx) == c.LUA_TSTRING) {
        const name = toSlice(L, idx);
        _ = std.meta.stringToEnum(ParamType, name) orelse fail(L, where, "unknown type '{s}' (the types are " ++ types ++ ")", .{name});
        w.write(L, "{\"type\":");
        _ = writeString(L, w, name);
        w.write(L, "}");
        return;
    }
    if (c.lua_type(L, idx) != c.LUA_TTABLE)
        fail(L, where, "must be a type name or a table {{type=, description=, ...}}, got a {s}", .{typeName(L, idx)});
    checkKeys(L, idx, &param_keys, where);

    if (field(L, idx, "type") != c.LUA_TSTRING) fail(L, where, "'type' must be one of " ++ types ++ ", got a {s}", .{typeName(L, -1)});
    const type_name = toSlice(L, -1);
    const t = std.meta.stringToEnum(ParamType, type_name) orelse fail(L, where, "unknown type '{s}' (the types are " ++ types ++ ")", .{type_name});
    pop(L, 1);
    w.write(L, "{\"type\":\"");
    w.write(L, @tagName(t));
    w.write(L, "\"");

    switch (field(L, idx, "description")) {
        c.LUA_TNIL => {},
        c.LUA_TSTRING => {
            w.write(L, ",\"description\":");
            writeStringOrFail(L, w, toSlice(L, -1), where, "'description'");
        },
        else => fail(L, where, "'description' must be a string, got a {s}", .{typeName(L, -1)}),
    }
    pop(L, 1);

    switch (field(L, idx, "enum")) {
        c.LUA_TNIL => {},
        c.LUA_TTABLE => {
            const n = arrayLength(L, -1) orelse fail(L, where, "'enum' must be a non-empty list of values", .{});
            if (n == 0) fail(L, where, "'enum' must be a non-empty list of values", .{});
            w.write(L, ",\"enum\":[");
            for (1..n + 1) |i| {
                if (i > 1) w.write(L, ",");
                _ = c.lua_rawgeti(L, -1, @intCast(i));
                var buf: [32]u8 = undefined;
                writeTypedValue(L, w, -1, t, where, std.fmt.bufPrint(&buf, "enum[{d}]", .{i}) catch "an enum value");
                pop(L, 1);
            }
            w.write(L, "]");
        },
        else => fail(L, where, "'enum' must be a list of values, got a {s}", .{typeName(L, -1)}),
    }
    pop(L, 1);

    const has_default = field(L, idx, "default") != c.LUA_TNIL;
    if (has_default) {
        if (!top) fail(L, where, "'default' is for parameters, not array items", .{});
        w.write(L, ",\"default\":");
        writeTypedValue(L, w, -1, t, where, "'default'");
    }
    pop(L, 1);

    switch (field(L, idx, "required")) {
        c.LUA_TNIL => {},
        c.LUA_TBOOLEAN => {
            if (!top) fail(L, where, "'required' is for parameters, not array items", .{});
            if (c.lua_toboolean(L, -1) != 0 and has_default)
                fail(L, where, "a parameter with a default is optional: drop required=true or the default", .{});
        },
        else => fail(L, where, "'required' must be a boolean, got a {s}", .{typeName(L, -1)}),
    }
    pop(L, 1);

    inline for (.{ "minimum", "maximum" }) |key| {
        switch (field(L, idx, key)) {
            c.LUA_TNIL => {},
            c.LUA_TNUMBER => {
                if (t != .integer and t != .number) fail(L, where, "'" ++ key ++ "' is for integer and number parameters", .{});
                w.write(L, ",\"" ++ key ++ "\":");
                writeNumber(L, w, -1, where);
            },
            else => fail(L, where, "'" ++ key ++ "' must be a number, got a {s}", .{typeName(L, -1)}),
        }
        pop(L, 1);
    }

    switch (field(L, idx, "items")) {
        c.LUA_TNIL => {},
        else => {
            if (t != .array) fail(L, where, "'items' is for array parameters", .{});
            const iw: Where = .{ .parent = where, .label = "items" };
            w.write(L, ",\"items\":");
            writeParam(L, w, -1, &iw, false);
        },
    }
    pop(L, 1);

    switch (field(L, idx, "params")) {
        c.LUA_TNIL => {},
        c.LUA_TTABLE => {
            if (t != .object) fail(L, where, "'params' is for object parameters", .{});
            w.write(L, ",");
            writeProperties(L, w, -1, where);
        },
        else => fail(L, where, "'params' must be a table of parameters, got a {s}", .{typeName(L, -1)}),
    }
    pop(L, 1);
    w.write(L, "}");
}

/// Checks the tool table at `idx` and writes its spec (the JSON object of
/// panto_agent_add_tool). Raises "tool 'NAME': ..." on a bad declaration. Leaves the stack as
/// it found it.
fn writeToolSpec(L: State, w: *Writer, idx_: c_int) void {
    const idx = c.lua_absindex(L, idx_);
    if (c.lua_type(L, idx) != c.LUA_TTABLE)
        fail(L, null, "a tool must be a table {{name=, description=, params=, handler=}}, got a {s}", .{typeName(L, idx)});
    if (field(L, idx, "name") != c.LUA_TSTRING)
        fail(L, null, "a tool needs a string 'name', got a {s}", .{typeName(L, -1)});
    const name = toSlice(L, -1);
    if (!validToolName(name))
        fail(L, null, "tool name '{s}' must be 1 to 64 letters, digits, '_' or '-'", .{name});
    const where: Where = .{ .label = "tool", .name = name };
    checkKeys(L, idx, &tool_keys, &where);
    w.write(L, "{\"name\":");
    _ = writeString(L, w, name);
    pop(L, 1);

    switch (field(L, idx, "description")) {
        c.LUA_TNIL => {},
        c.LUA_TSTRING => {
            w.write(L, ",\"description\":");
            writeStringOrFail(L, w, toSlice(L, -1), &where, "'description'");
        },
        else => fail(L, &where, "'description' must be a string, got a {s}", .{typeName(L, -1)}),
    }
    pop(L, 1);

    const params_type = field(L, idx, "params");
    const schema_type = field(L, idx, "schema");
    if (params_type != c.LUA_TNIL and schema_type != c.LUA_TNIL) fail(L, &where, "give 'params' or 'schema', not both", .{});
    switch (schema_type) {
        c.LUA_TNIL => {},
        c.LUA_TSTRING => {
            const text = toSlice(L, -1);
            // No Lua call between the allocation and its free: validate frees on return.
            const ok = std.json.validate(gpa, text) catch fail(L, &where, "not enough memory", .{});
            if (!ok) fail(L, &where, "'schema' is not valid JSON", .{});
            const first = std.mem.trimStart(u8, text, " \t\r\n");
            if (first.len == 0 or first[0] != '{') fail(L, &where, "'schema' must be a JSON object", .{});
            w.write(L, ",\"input_schema\":");
            w.write(L, text);
        },
        c.LUA_TTABLE => {
            if (arrayLength(L, -1) != null) fail(L, &where, "'schema' must be a JSON object, not an array", .{});
            const sw: Where = .{ .parent = &where, .label = "schema" };
            w.write(L, ",\"input_schema\":");
            writeValue(L, w, -1, 0, &sw);
        },
        else => fail(L, &where, "'schema' must be a JSON Schema (a table or JSON text), got a {s}", .{typeName(L, -1)}),
    }
    pop(L, 1);
    switch (params_type) {
        c.LUA_TNIL => {},
        c.LUA_TTABLE => {
            w.write(L, ",\"input_schema\":{\"type\":\"object\",");
            writeProperties(L, w, -1, &where);
            w.write(L, "}");
        },
        else => fail(L, &where, "'params' must be a table of parameters, got a {s}", .{typeName(L, -1)}),
    }
    pop(L, 1);

    if (field(L, idx, "capabilities") != c.LUA_TNIL) {
        w.write(L, ",\"capabilities\":");
        writeStringList(L, w, -1, &where, "'capabilities'");
    }
    pop(L, 1);

    if (field(L, idx, "handler") != c.LUA_TNIL and !isCallable(L, -1))
        fail(L, &where, "'handler' must be a function (or callable), got a {s}", .{typeName(L, -1)});
    pop(L, 1);
    w.write(L, "}");
}

/// toolSpec(tool) -> spec JSON, name, handler (or nil). Raises on a bad declaration.
fn toolSpec(L: State) callconv(.c) c_int {
    c.lua_settop(L, 1);
    const w = newWriter(L); // 2
    writeToolSpec(L, w, 1);
    pushWritten(L, w); // 3
    _ = field(L, 1, "name"); // 4
    _ = field(L, 1, "handler"); // 5
    return 3;
}

/// Pushes the sequence of tool tables that `idx` holds: a list of tools, or a panto.Registry.
fn pushToolList(L: State, idx_: c_int, where: ?*const Where) void {
    const idx = c.lua_absindex(L, idx_);
    if (c.luaL_testudata(L, idx, registry_tname) != null) {
        _ = c.lua_getiuservalue(L, idx, uv_registry_tools);
        return;
    }
    if (c.lua_type(L, idx) != c.LUA_TTABLE or (arrayLength(L, idx) == null and !emptyTable(L, idx)))
        fail(L, where, "must be a list of tools or a panto.Registry, got a {s}", .{typeName(L, idx)});
    c.lua_pushvalue(L, idx);
}

/// Writes the tools of the sequence at `idx` as a JSON array of specs; with `handlers`
/// (a table index, or 0), records each handler under its tool's name.
fn writeToolArray(L: State, w: *Writer, idx_: c_int, handlers: c_int) void {
    const idx = c.lua_absindex(L, idx_);
    const n: usize = @intCast(c.lua_rawlen(L, idx));
    w.write(L, "[");
    for (1..n + 1) |i| {
        if (i > 1) w.write(L, ",");
        _ = c.lua_rawgeti(L, idx, @intCast(i));
        writeToolSpec(L, w, -1);
        if (handlers != 0 and field(L, -1, "handler") != c.LUA_TNIL) {
            _ = field(L, -2, "name");
            c.lua_rotate(L, -2, 1);
            c.lua_rawset(L, handlers);
        } else if (handlers != 0) pop(L, 1);
        pop(L, 1);
    }
    w.write(L, "]");
}

// ---- panto.Agent{...} -------------------------------------------------------------------

const OptionKind = enum { string, integer, strings, tools, read_tool, integers };

const Option = struct {
    name: [:0]const u8,
    kind: OptionKind = .string,
    /// For `.integers`: the keys of the table, each an integer.
    keys: []const []const u8 = &.{},
};

/// The agent options of panto_agent_new (include/panto.h), in the order they are encoded.
const options = [_]Option{
    .{ .name = "provider" },
    .{ .name = "model" },
    .{ .name = "base_url" },
    .{ .name = "api_key" },
    .{ .name = "system" },
    .{ .name = "max_tokens", .kind = .integer },
    .{ .name = "tools", .kind = .tools },
    .{ .name = "capabilities", .kind = .strings },
    .{ .name = "max_tool_iterations", .kind = .integer },
    .{ .name = "read_tool", .kind = .read_tool },
    .{ .name = "thinking" },
    .{ .name = "retry", .kind = .integers, .keys = &.{ "max_retries", "initial_delay_ms", "max_delay_ms", "max_retry_after_ms" } },
    .{ .name = "timeouts", .kind = .integers, .keys = &.{ "connect_ms", "first_byte_ms", "idle_ms", "total_ms" } },
    .{ .name = "keep_alive", .kind = .integers, .keys = &.{"idle_ms"} },
};

const option_names = blk: {
    var names: [options.len][]const u8 = undefined;
    for (options, 0..) |o, i| names[i] = o.name;
    break :blk names;
};

fn writeInteger(L: State, w: *Writer, idx: c_int, what: []const u8) void {
    if (c.lua_type(L, idx) != c.LUA_TNUMBER) fail(L, null, "{s} must be an integer, got a {s}", .{ what, typeName(L, idx) });
    var isint: c_int = 0;
    const n = c.lua_tointegerx(L, idx, &isint);
    if (isint == 0) fail(L, null, "{s} must be an integer, got {d}", .{ what, c.lua_tonumberx(L, idx, null) });
    var buf: [32]u8 = undefined;
    w.write(L, std.fmt.bufPrint(&buf, "{d}", .{n}) catch unreachable);
}

/// buildConfig(options, handlers) -> the JSON config of panto_agent_new. Records the tools'
/// handlers in `handlers`. With `handlers` nil, the changes of panto_agent_set_config, which
/// cannot hold `tools`. Raises a message on a refused option.
fn buildConfig(L: State) callconv(.c) c_int {
    c.lua_settop(L, 2);
    const changes = isNil(L, 2);
    // Refuse keys that are not options before anything else.
    c.lua_pushnil(L);
    while (c.lua_next(L, 1) != 0) {
        if (c.lua_type(L, -2) != c.LUA_TSTRING)
            fail(L, null, "option names must be strings, got a {s} key", .{typeName(L, -2)});
        const name = toSlice(L, -2);
        if (!isOneOf(name, &option_names))
            fail(L, null, "unknown option '{s}' (the options are " ++ keyList(&option_names) ++ ")", .{name});
        if (changes and std.mem.eql(u8, name, "tools"))
            fail(L, null, "option 'tools' cannot change: add tools with agent:add_tool(tool)", .{});
        pop(L, 1);
    }

    const w = newWriter(L); // 3
    w.write(L, "{");
    var count: usize = 0;
    inline for (options) |o| {
        const t = field(L, 1, o.name); // 4
        if (t != c.LUA_TNIL) {
            if (count > 0) w.write(L, ",");
            w.write(L, "\"" ++ o.name ++ "\":");
            count += 1;
            const what = "option '" ++ o.name ++ "'";
            switch (o.kind) {
                .string => {
                    if (t != c.LUA_TSTRING) fail(L, null, what ++ " must be a string, got a {s}", .{typeName(L, 4)});
                    writeStringOrFail(L, w, toSlice(L, 4), null, what);
                },
                .integer => writeInteger(L, w, 4, what),
                .strings => writeStringList(L, w, 4, null, what),
                .tools => {
                    const where: Where = .{ .label = what };
                    pushToolList(L, 4, &where);
                    writeToolArray(L, w, -1, 2);
                    pop(L, 1);
                },
                .read_tool => {
                    const where: Where = .{ .label = what };
                    if (t != c.LUA_TTABLE) fail(L, null, what ++ " must be a table {{root=, max_bytes=}}, got a {s}", .{typeName(L, 4)});
                    checkKeys(L, 4, &.{ "root", "max_bytes" }, &where);
                    w.write(L, "{");
                    if (field(L, 4, "root") != c.LUA_TNIL) {
                        if (c.lua_type(L, -1) != c.LUA_TSTRING) fail(L, &where, "'root' must be a string, got a {s}", .{typeName(L, -1)});
                        w.write(L, "\"root\":");
                        writeStringOrFail(L, w, toSlice(L, -1), &where, "'root'");
                    }
                    const has_root = c.lua_type(L, -1) != c.LUA_TNIL;
                    pop(L, 1);
                    if (field(L, 4, "max_bytes") != c.LUA_TNIL) {
                        w.write(L, if (has_root) ",\"max_bytes\":" else "\"max_bytes\":");
                        writeInteger(L, w, -1, what ++ ".max_bytes");
                    }
                    pop(L, 1);
                    w.write(L, "}");
                },
                .integers => {
                    const where: Where = .{ .label = what };
                    const fields = comptime blk: {
                        var list: []const u8 = "";
                        for (o.keys, 0..) |k, i| list = list ++ (if (i == 0) "" else ", ") ++ k ++ "=";
                        break :blk list;
                    };
                    if (t != c.LUA_TTABLE) fail(L, null, what ++ " must be a table {{" ++ fields ++ "}}, got a {s}", .{typeName(L, 4)});
                    checkKeys(L, 4, o.keys, &where);
                    w.write(L, "{");
                    var n: usize = 0;
                    inline for (o.keys) |key| {
                        const z = key ++ "\x00";
                        if (field(L, 4, z[0..key.len :0]) != c.LUA_TNIL) {
                            if (n > 0) w.write(L, ",");
                            n += 1;
                            w.write(L, "\"" ++ key ++ "\":");
                            writeInteger(L, w, -1, "option '" ++ o.name ++ "." ++ key ++ "'");
                        }
                        pop(L, 1);
                    }
                    w.write(L, "}");
                },
            }
        }
        pop(L, 1);
    }
    w.write(L, "}");
    pushWritten(L, w);
    return 1;
}

/// Creates an agent userdata at the top of the stack (handle not set yet).
fn newAgentUserdata(L: State) *Agent {
    const a: *Agent = @ptrCast(@alignCast(c.lua_newuserdatauv(L, @sizeOf(Agent), 1).?));
    a.* = .{ .handle = null, .streams = null };
    c.luaL_setmetatable(L, agent_tname);
    return a;
}

/// panto.Agent{provider=, model=, ..., tools=, capabilities=, max_tool_iterations=,
/// read_tool=}: a new agent, or nil, message, "config" when the configuration is refused.
fn agentNew(L: State) callconv(.c) c_int {
    c.luaL_checktype(L, 1, c.LUA_TTABLE);
    c.lua_settop(L, 1);
    c.lua_createtable(L, 0, 0); // 2: the handlers
    c.lua_pushvalue(L, 1);
    c.lua_pushvalue(L, 2);
    if (!protectedCall(L, buildConfig, 2, 1)) {
        if (c.lua_type(L, -1) != c.LUA_TSTRING) return c.lua_error(L); // memory error, say
        c.lua_pushnil(L);
        c.lua_rotate(L, -2, 1);
        _ = c.lua_pushstring(L, c.panto_status_name(c.PANTO_ERR_CONFIG));
        return 3;
    }
    const json = c.lua_tolstring(L, 3, null);

    // The userdata exists before the agent does, so that no error can leak the agent.
    const a = newAgentUserdata(L); // 4
    c.lua_pushvalue(L, 2);
    _ = c.lua_setiuservalue(L, 4, uv_agent_handlers);
    var handle: ?*c.PantoAgent = null;
    const rc = c.panto_agent_new(json, &handle);
    a.handle = handle;
    if (rc >= 0 and handle != null) return 1;

    c.lua_pushnil(L);
    if (handle) |h| {
        var err = newError();
        const code = c.panto_agent_error(h, &err);
        const msg = slice(err.message);
        if (msg.len > 0) pushSlice(L, msg) else _ = c.lua_pushstring(L, c.panto_status_name(rc));
        _ = c.lua_pushstring(L, c.panto_status_name(if (code != 0) code else rc));
        closeAgent(a);
    } else {
        _ = c.lua_pushfstring(L, "cannot create the agent: %s", c.panto_status_name(rc));
        _ = c.lua_pushstring(L, c.panto_status_name(rc));
    }
    return 3;
}

// ---- Agent methods ----------------------------------------------------------------------

/// agent:run(text [, {run_tools = true}]): starts a turn and returns its stream. Raises a
/// panto.Error (code "busy" while another stream of the agent is unfinished).
fn agentRun(L: State) callconv(.c) c_int {
    const a = checkOpenAgent(L, 1);
    var len: usize = 0;
    const text = c.luaL_checklstring(L, 2, &len);
    if (std.mem.indexOfScalar(u8, text[0..len], 0) != null)
        _ = c.luaL_argerror(L, 2, "text contains a NUL byte");
    var run_tools = true;
    if (!isNoneOrNil(L, 3)) {
        c.luaL_checktype(L, 3, c.LUA_TTABLE);
        c.lua_pushnil(L);
        while (c.lua_next(L, 3) != 0) {
            if (c.lua_type(L, -2) != c.LUA_TSTRING or !std.mem.eql(u8, toSlice(L, -2), "run_tools"))
                _ = c.luaL_argerror(L, 3, "unknown option (the options are run_tools)");
            if (c.lua_type(L, -1) != c.LUA_TBOOLEAN)
                _ = c.luaL_argerror(L, 3, "run_tools must be a boolean");
            run_tools = c.lua_toboolean(L, -1) != 0;
            pop(L, 1);
        }
    }
    c.lua_settop(L, 2);

    // The userdata exists before the stream does, so that no error can leak the stream.
    const s: *Stream = @ptrCast(@alignCast(c.lua_newuserdatauv(L, @sizeOf(Stream), 3).?)); // index 3
    s.* = .{ .handle = null, .phase = .closed, .run_tools = run_tools, .agent = null, .prev = null, .next = null, .timer = null };
    c.luaL_setmetatable(L, stream_tname);
    c.lua_pushvalue(L, 1);
    _ = c.lua_setiuservalue(L, 3, uv_stream_agent);

    var handle: ?*c.PantoStream = null;
    const rc = c.panto_agent_run(a.handle, text, &handle);
    if (handle) |h| {
        s.handle = h;
        s.phase = .open;
        s.agent = a;
        s.next = a.streams;
        if (a.streams) |n| n.prev = s;
        a.streams = s;
    }
    if (rc < 0) {
        releaseStream(s, .closed); // only if the library set it anyway
        raiseAgentError(L, a, rc);
    }
    if (handle == null) return c.luaL_error(L, "panto_agent_run returned no stream");
    return 1;
}

/// Returns nil, message, code from the agent's last error.
fn agentFailure(L: State, a: *Agent, rc: c_int) c_int {
    var err = newError();
    const code = c.panto_agent_error(a.handle, &err);
    c.lua_pushnil(L);
    const msg = slice(err.message);
    if (msg.len > 0) pushSlice(L, msg) else _ = c.lua_pushstring(L, c.panto_status_name(rc));
    _ = c.lua_pushstring(L, c.panto_status_name(if (code != 0) code else rc));
    return 3;
}

/// agent:conversation(): the conversation so far as a JSON string (an array of
/// {"role", "content"} messages), or nil, message, code.
fn agentConversation(L: State) callconv(.c) c_int {
    const a = checkOpenAgent(L, 1);
    var json = std.mem.zeroes(c.PantoString);
    const rc = c.panto_agent_conversation(a.handle, &json);
    if (rc < 0) return agentFailure(L, a, rc);
    pushSlice(L, slice(json));
    return 1;
}

/// agent:connections(): what the agent's connections did so far, as a table
/// {opened = N, reused = N}: connections opened (TCP connections, and CONNECT tunnels through
/// a proxy), and requests sent on a connection kept alive from an earlier request.
fn agentConnections(L: State) callconv(.c) c_int {
    const a = checkOpenAgent(L, 1);
    var counts = std.mem.zeroes(c.PantoConnections);
    counts.size = @sizeOf(c.PantoConnections);
    const rc = c.panto_agent_connections(a.handle, &counts);
    if (rc < 0) return agentFailure(L, a, rc);
    c.lua_createtable(L, 0, 2);
    c.lua_pushinteger(L, @intCast(counts.opened));
    c.lua_setfield(L, -2, "opened");
    c.lua_pushinteger(L, @intCast(counts.reused));
    c.lua_setfield(L, -2, "reused");
    return 1;
}

/// agent:set_config{...}: changes the options given (those of panto.Agent but `tools`).
/// Returns true, or nil, message, code ("config": refused, nothing changed; "busy": a stream of
/// the agent is unfinished).
fn agentSetConfig(L: State) callconv(.c) c_int {
    const a = checkOpenAgent(L, 1);
    c.luaL_checktype(L, 2, c.LUA_TTABLE);
    c.lua_settop(L, 2);
    c.lua_pushvalue(L, 2);
    c.lua_pushnil(L); // no handlers: changes
    if (!protectedCall(L, buildConfig, 2, 1)) {
        if (c.lua_type(L, -1) != c.LUA_TSTRING) return c.lua_error(L); // memory error, say
        c.lua_pushnil(L);
        c.lua_rotate(L, -2, 1);
        _ = c.lua_pushstring(L, c.panto_status_name(c.PANTO_ERR_CONFIG));
        return 3;
    }
    const rc = c.panto_agent_set_config(a.handle, c.lua_tolstring(L, 3, null));
    if (rc < 0) return agentFailure(L, a, rc);
    c.lua_pushboolean(L, 1);
    return 1;
}

/// agent:add_tool(tool): registers a tool (and its handler). Raises a panto.Error: code
/// "config" for a bad declaration or a name already taken, "busy" during a turn.
fn agentAddTool(L: State) callconv(.c) c_int {
    const a = checkOpenAgent(L, 1);
    c.luaL_checkany(L, 2);
    c.lua_settop(L, 2);
    c.lua_pushvalue(L, 2);
    if (!protectedCall(L, toolSpec, 1, 3)) raiseConfigError(L);
    // Stack: agent, tool, spec (3), name (4), handler (5).
    const rc = c.panto_agent_add_tool(a.handle, c.lua_tolstring(L, 3, null));
    if (rc < 0) raiseAgentError(L, a, rc);
    if (!isNil(L, 5)) {
        _ = c.lua_getiuservalue(L, 1, uv_agent_handlers);
        c.lua_pushvalue(L, 4);
        c.lua_pushvalue(L, 5);
        c.lua_rawset(L, -3);
    }
    return 0;
}

fn optBoolean(L: State, idx: c_int) bool {
    if (isNoneOrNil(L, idx)) return false;
    c.luaL_checktype(L, idx, c.LUA_TBOOLEAN);
    return c.lua_toboolean(L, idx) != 0;
}

/// agent:tools(format [, only_allowed]): the agent's tools as a JSON array in `format`
/// ("anthropic", "openai" or "panto"); raises a panto.Error for an unknown format.
fn agentTools(L: State) callconv(.c) c_int {
    const a = checkOpenAgent(L, 1);
    const format = c.luaL_checklstring(L, 2, null);
    const only_allowed = optBoolean(L, 3);
    var json = std.mem.zeroes(c.PantoString);
    const rc = c.panto_agent_tools(a.handle, format, @intFromBool(only_allowed), &json);
    if (rc < 0) raiseAgentError(L, a, rc);
    pushSlice(L, slice(json));
    return 1;
}

/// agent:close(), __close and __gc: closes the agent's streams, then frees the agent and lets
/// go of the handlers. Safe to call more than once.
fn agentClose(L: State) callconv(.c) c_int {
    closeAgent(toAgent(L, 1));
    c.lua_pushnil(L);
    _ = c.lua_setiuservalue(L, 1, uv_agent_handlers);
    return 0;
}

fn agentToString(L: State) callconv(.c) c_int {
    const a = toAgent(L, 1);
    if (a.handle) |h|
        _ = c.lua_pushfstring(L, "panto.Agent (%p)", @as(*const anyopaque, h))
    else
        _ = c.lua_pushstring(L, "panto.Agent (closed)");
    return 1;
}

// ---- Exporting tools without an agent -----------------------------------------------------

/// Pushes the JSON export of the tools in the sequence at `list` (absolute) in `format`, as
/// panto's core writes it: they go through a scratch agent (no network). With `caps` (an
/// absolute index, or 0) only the tools those capabilities allow.
fn exportTools(L: State, list: c_int, caps: c_int, format: [*:0]const u8) void {
    const w = newWriter(L);
    w.write(L, "{\"provider\":\"anthropic\",\"model\":\"panto-export\",\"api_key\":\"-\",\"tools\":");
    c.lua_pushvalue(L, list);
    c.lua_pushlightuserdata(L, w);
    if (!protectedCall(L, writeToolsProtected, 2, 0)) raiseConfigError(L);
    if (caps != 0) {
        w.write(L, ",\"capabilities\":");
        writeStringList(L, w, caps, null, "capabilities");
    }
    w.write(L, "}");
    pushWritten(L, w);
    const a = newAgentUserdata(L);
    var handle: ?*c.PantoAgent = null;
    const rc = c.panto_agent_new(c.lua_tolstring(L, -2, null), &handle);
    a.handle = handle;
    if (rc < 0 or handle == null) {
        var err = newError();
        if (handle) |h| _ = c.panto_agent_error(h, &err);
        pushError(L, &err, rc); // copies the detail before the agent goes
        closeAgent(a);
        _ = c.lua_error(L);
    }
    var json = std.mem.zeroes(c.PantoString);
    const trc = c.panto_agent_tools(a.handle, format, @intFromBool(caps != 0), &json);
    if (trc < 0) raiseAgentError(L, a, trc);
    pushSlice(L, slice(json));
    closeAgent(a);
    c.lua_rotate(L, -4, 1); // the JSON below the writer, the config and the agent
    pop(L, 3);
}

/// writeToolsProtected(list, writer): writeToolArray under a protected call.
fn writeToolsProtected(L: State) callconv(.c) c_int {
    const w: *Writer = @ptrCast(@alignCast(c.lua_touserdata(L, 2).?));
    writeToolArray(L, w, 1, 0);
    return 0;
}

/// panto.tool_schema(tool [, format]): the tool as the provider sees it, a JSON object in
/// "anthropic" (default), "openai" or "panto" format.
fn toolSchema(L: State) callconv(.c) c_int {
    c.luaL_checkany(L, 1);
    const format = c.luaL_optlstring(L, 2, "anthropic", null);
    c.lua_settop(L, 2);
    c.lua_createtable(L, 1, 0); // 3: {tool}
    c.lua_pushvalue(L, 1);
    c.lua_rawseti(L, 3, 1);
    exportTools(L, 3, 0, format);
    // "[{...}]" -> "{...}"
    const json = toSlice(L, -1);
    if (json.len < 2) return c.luaL_error(L, "panto exported no tool");
    pushSlice(L, json[1 .. json.len - 1]);
    return 1;
}

// ---- panto.Registry -----------------------------------------------------------------------

fn checkRegistry(L: State, idx: c_int) void {
    _ = c.luaL_checkudata(L, idx, registry_tname);
}

/// Pushes a new, empty registry.
fn newRegistry(L: State) void {
    _ = c.lua_newuserdatauv(L, 1, 1);
    c.luaL_setmetatable(L, registry_tname);
    c.lua_createtable(L, 0, 0);
    _ = c.lua_setiuservalue(L, -2, uv_registry_tools);
}

/// The index in the registry's list (at `list`) of the tool named like the string at the
/// top, or 0.
fn findTool(L: State, list: c_int) c.lua_Integer {
    const n = c.lua_rawlen(L, list);
    var i: c.lua_Integer = 1;
    while (i <= n) : (i += 1) {
        _ = c.lua_rawgeti(L, list, i);
        _ = field(L, -1, "name");
        const same = c.lua_rawequal(L, -1, -3) != 0;
        pop(L, 2);
        if (same) return i;
    }
    return 0;
}

/// panto.Registry([tools]): a new registry, with the tools of the list `tools`.
fn registryNew(L: State) callconv(.c) c_int {
    c.lua_settop(L, 1);
    newRegistry(L); // 2
    if (isNil(L, 1)) return 1;
    c.luaL_checktype(L, 1, c.LUA_TTABLE);
    const n = c.lua_rawlen(L, 1);
    var i: c.lua_Integer = 1;
    while (i <= n) : (i += 1) {
        c.lua_pushcclosure(L, registryRegister, 0);
        c.lua_pushvalue(L, 2);
        _ = c.lua_rawgeti(L, 1, i);
        c.lua_callk(L, 2, 0, 0, null);
    }
    c.lua_settop(L, 2);
    return 1;
}

/// registry:register(tool): checks the declaration and adds the tool; returns it. Raises a
/// panto.Error with code "config" for a bad declaration or a name already registered.
fn registryRegister(L: State) callconv(.c) c_int {
    checkRegistry(L, 1);
    c.luaL_checkany(L, 2);
    c.lua_settop(L, 2);
    c.lua_pushvalue(L, 2);
    if (!protectedCall(L, toolSpec, 1, 2)) raiseConfigError(L);
    // Stack: registry, tool, spec, name.
    _ = c.lua_getiuservalue(L, 1, uv_registry_tools); // 5
    c.lua_pushvalue(L, 4);
    if (findTool(L, 5) != 0) {
        _ = c.lua_pushfstring(L, "a tool named '%s' is already registered", c.lua_tolstring(L, 4, null));
        raiseConfigError(L);
    }
    c.lua_pushvalue(L, 2);
    c.lua_rawseti(L, 5, @intCast(c.lua_rawlen(L, 5) + 1));
    c.lua_settop(L, 2);
    return 1;
}

/// registry:get(name): the tool of that name, or nil.
fn registryGet(L: State) callconv(.c) c_int {
    checkRegistry(L, 1);
    _ = c.luaL_checklstring(L, 2, null);
    c.lua_settop(L, 2);
    _ = c.lua_getiuservalue(L, 1, uv_registry_tools); // 3
    c.lua_pushvalue(L, 2);
    const i = findTool(L, 3);
    if (i == 0) c.lua_pushnil(L) else _ = c.lua_rawgeti(L, 3, i);
    return 1;
}

/// registry:list(): a new list of the tools, in the order they were registered.
fn registryList(L: State) callconv(.c) c_int {
    checkRegistry(L, 1);
    _ = c.lua_getiuservalue(L, 1, uv_registry_tools); // 2
    const n = c.lua_rawlen(L, 2);
    c.lua_createtable(L, @intCast(n), 0);
    var i: c.lua_Integer = 1;
    while (i <= n) : (i += 1) {
        _ = c.lua_rawgeti(L, 2, i);
        c.lua_rawseti(L, -2, i);
    }
    return 1;
}

/// Whether the tool at `tool` requires only capabilities in the list at `caps`.
fn toolAllowed(L: State, tool: c_int, caps: c_int) bool {
    if (field(L, tool, "capabilities") != c.LUA_TTABLE) {
        pop(L, 1);
        return true;
    }
    const need = c.lua_absindex(L, -1);
    defer pop(L, 1);
    const n = c.lua_rawlen(L, need);
    const m = c.lua_rawlen(L, caps);
    var i: c.lua_Integer = 1;
    outer: while (i <= n) : (i += 1) {
        _ = c.lua_rawgeti(L, need, i);
        var j: c.lua_Integer = 1;
        while (j <= m) : (j += 1) {
            _ = c.lua_rawgeti(L, caps, j);
            const same = c.lua_rawequal(L, -1, -2) != 0;
            pop(L, 1);
            if (same) {
                pop(L, 1);
                continue :outer;
            }
        }
        pop(L, 1);
        return false;
    }
    return true;
}

fn checkCapabilities(L: State, idx: c_int) void {
    c.luaL_checktype(L, idx, c.LUA_TTABLE);
    const n = c.lua_rawlen(L, idx);
    var i: c.lua_Integer = 1;
    while (i <= n) : (i += 1) {
        if (c.lua_rawgeti(L, idx, i) != c.LUA_TSTRING) _ = c.luaL_argerror(L, idx, "capabilities must be a list of strings");
        pop(L, 1);
    }
}

/// registry:filter(capabilities): a new registry of the tools those capabilities allow (a
/// tool's required capabilities are all among them).
fn registryFilter(L: State) callconv(.c) c_int {
    checkRegistry(L, 1);
    checkCapabilities(L, 2);
    c.lua_settop(L, 2);
    _ = c.lua_getiuservalue(L, 1, uv_registry_tools); // 3
    newRegistry(L); // 4
    _ = c.lua_getiuservalue(L, 4, uv_registry_tools); // 5
    const n = c.lua_rawlen(L, 3);
    var k: c.lua_Integer = 0;
    var i: c.lua_Integer = 1;
    while (i <= n) : (i += 1) {
        _ = c.lua_rawgeti(L, 3, i);
        if (toolAllowed(L, 6, 2)) {
            k += 1;
            c.lua_rawseti(L, 5, k);
        } else pop(L, 1);
    }
    c.lua_settop(L, 4);
    return 1;
}

/// registry:export(format [, capabilities]): the tools as a JSON array in `format`
/// ("anthropic", "openai" or "panto"), as panto sends them; with `capabilities`, only the
/// tools they allow.
fn registryExport(L: State) callconv(.c) c_int {
    checkRegistry(L, 1);
    const format = c.luaL_checklstring(L, 2, null);
    const has_caps = !isNoneOrNil(L, 3);
    if (has_caps) checkCapabilities(L, 3);
    c.lua_settop(L, 3);
    _ = c.lua_getiuservalue(L, 1, uv_registry_tools); // 4
    exportTools(L, 4, if (has_caps) 3 else 0, format);
    return 1;
}

fn registryLen(L: State) callconv(.c) c_int {
    checkRegistry(L, 1);
    _ = c.lua_getiuservalue(L, 1, uv_registry_tools);
    c.lua_pushinteger(L, @intCast(c.lua_rawlen(L, -1)));
    return 1;
}

fn registryToString(L: State) callconv(.c) c_int {
    checkRegistry(L, 1);
    _ = c.lua_getiuservalue(L, 1, uv_registry_tools);
    _ = c.lua_pushfstring(L, "panto.Registry (%I tools)", @as(c.lua_Integer, @intCast(c.lua_rawlen(L, -1))));
    return 1;
}

// ---- Stream methods ---------------------------------------------------------------------

// ---- Event tables ------------------------------------------------------------------------

/// The keys of event tables. With the event and block kind names they are made once per Lua
/// state, as upvalues of the stream methods (the names, below): setting a field then copies
/// a string already made, where lua_setfield would intern the C string (a strcmp) each time,
/// and an upvalue is the cheapest value to push (no table lookup).
const Key = enum {
    kind,
    id,
    model,
    index,
    block_kind,
    text,
    stop_reason,
    provider_stop_reason,
    usage,
    input_tokens,
    output_tokens,
    cache_read_tokens,
    cache_write_tokens,
    reasoning_tokens,
    name,
    input_json,
    awaiting_result,
    content,
    is_error,
    attempt,
    delay_ms,
    http_status,
    reason,
};
const key_count = @typeInfo(Key).@"enum".fields.len;
/// The names, upvalues 1..names_count of every stream method: keys at 1..key_count, then
/// event kinds 1..max_event_kind, then block kinds 0..max_block_kind.
const max_event_kind = c.PANTO_EVENT_PROVIDER_RETRY;
const max_block_kind = c.PANTO_BLOCK_REDACTED_THINKING;
const event_kind_base = key_count;
const block_kind_base = event_kind_base + max_event_kind + 1;
const names_count: c_int = block_kind_base + max_block_kind + 1;

/// The upvalues of every stream method: the names, then the stream metatable (so that
/// next() checks its argument without luaL_checkudata's registry lookup by name).
const method_upvalues: c_int = names_count + 1;
const stream_metatable_upvalue = c.lua_upvalueindex(names_count + 1);

/// Pushes the method_upvalues upvalues of the stream methods; the stream metatable is at `mt`.
fn pushMethodUpvalues(L: State, mt: c_int) void {
    c.luaL_checkstack(L, method_upvalues, "panto: the event names");
    inline for (@typeInfo(Key).@"enum".fields) |f| _ = c.lua_pushstring(L, f.name);
    c.lua_pushnil(L); // event kind 0 is none
    for (1..max_event_kind + 1) |k| _ = c.lua_pushstring(L, c.panto_event_kind_name(@intCast(k)));
    for (0..max_block_kind + 1) |k| _ = c.lua_pushstring(L, c.panto_block_kind_name(@intCast(k)));
    c.lua_pushvalue(L, mt);
}

/// Pushes a copy of the upvalues of the running stream method.
fn pushOwnUpvalues(L: State) void {
    c.luaL_checkstack(L, method_upvalues, "panto: the event names");
    var i: c_int = 1;
    while (i <= method_upvalues) : (i += 1) c.lua_pushvalue(L, c.lua_upvalueindex(i));
}

fn pushName(L: State, i: c_int) void {
    c.lua_pushvalue(L, c.lua_upvalueindex(i));
}

fn pushKey(L: State, key: Key) void {
    pushName(L, @intFromEnum(key) + 1);
}

/// The value at the top goes into the table below it under `key`. Raw: event tables are
/// fresh and have no metatable.
fn setTop(L: State, key: Key) void {
    pushKey(L, key);
    c.lua_rotate(L, -2, 1);
    c.lua_rawset(L, -3);
}

fn fieldString(L: State, key: Key, s: []const u8) void {
    pushKey(L, key);
    pushSlice(L, s);
    c.lua_rawset(L, -3);
}

fn fieldInteger(L: State, key: Key, n: anytype) void {
    pushKey(L, key);
    c.lua_pushinteger(L, std.math.cast(c.lua_Integer, n) orelse std.math.maxInt(c.lua_Integer));
    c.lua_rawset(L, -3);
}

fn fieldBoolean(L: State, key: Key, b: bool) void {
    pushKey(L, key);
    c.lua_pushboolean(L, @intFromBool(b));
    c.lua_rawset(L, -3);
}

/// The name of an event or block kind: from the names table, or, for a kind newer than this
/// module, from the C ABI.
fn fieldKindName(L: State, key: Key, kind: c_int, comptime first: c_int, comptime last: c_int, comptime base: c_int, name: *const fn (c_int) callconv(.c) [*c]const u8) void {
    pushKey(L, key);
    if (kind >= first and kind <= last)
        pushName(L, base + 1 + kind)
    else
        _ = c.lua_pushstring(L, name(kind));
    c.lua_rawset(L, -3);
}

fn fieldEventKind(L: State, kind: c_int) void {
    fieldKindName(L, .kind, kind, 1, max_event_kind, event_kind_base, c.panto_event_kind_name);
}

fn fieldBlockKind(L: State, kind: c_int) void {
    fieldKindName(L, .block_kind, kind, 0, max_block_kind, block_kind_base, c.panto_block_kind_name);
}

fn setUsage(L: State, ev: *const c.PantoEvent) void {
    pushKey(L, .stop_reason);
    _ = c.lua_pushstring(L, c.panto_stop_reason_name(ev.stop_reason));
    c.lua_rawset(L, -3);
    fieldString(L, .provider_stop_reason, slice(ev.provider_stop_reason));
    c.lua_createtable(L, 0, 5);
    fieldInteger(L, .input_tokens, ev.usage.input_tokens);
    fieldInteger(L, .output_tokens, ev.usage.output_tokens);
    fieldInteger(L, .cache_read_tokens, ev.usage.cache_read_tokens);
    fieldInteger(L, .cache_write_tokens, ev.usage.cache_write_tokens);
    fieldInteger(L, .reasoning_tokens, ev.usage.reasoning_tokens);
    setTop(L, .usage);
}

/// How many fields the table of an event of this kind gets (its hash part is made that size).
fn fieldCount(kind: c_int) c_int {
    return switch (kind) {
        c.PANTO_EVENT_MESSAGE_START, c.PANTO_EVENT_BLOCK_START => 3,
        c.PANTO_EVENT_TOOL_CALL_START => 6,
        c.PANTO_EVENT_TOOL_RESULT, c.PANTO_EVENT_PROVIDER_RETRY => 5,
        else => 4,
    };
}

/// Pushes the table of an event. Needs the names as upvalues (every stream method).
fn pushEvent(L: State, ev: *const c.PantoEvent) void {
    c.lua_createtable(L, 0, fieldCount(ev.kind));
    fieldEventKind(L, ev.kind);
    switch (ev.kind) {
        c.PANTO_EVENT_MESSAGE_START => {
            fieldString(L, .id, slice(ev.id));
            fieldString(L, .model, slice(ev.model));
        },
        c.PANTO_EVENT_BLOCK_START, c.PANTO_EVENT_CONTENT_DELTA, c.PANTO_EVENT_BLOCK_COMPLETE => {
            fieldInteger(L, .index, ev.index);
            fieldBlockKind(L, ev.block_kind);
            if (ev.kind != c.PANTO_EVENT_BLOCK_START) fieldString(L, .text, slice(ev.text));
        },
        c.PANTO_EVENT_MESSAGE_END, c.PANTO_EVENT_MESSAGE_COMPLETE => setUsage(L, ev),
        c.PANTO_EVENT_TOOL_DETAILS => {
            fieldInteger(L, .index, ev.index);
            fieldString(L, .id, slice(ev.id));
            fieldString(L, .name, slice(ev.name));
        },
        c.PANTO_EVENT_TOOL_CALL_START => {
            fieldString(L, .id, slice(ev.id));
            fieldString(L, .name, slice(ev.name));
            fieldString(L, .input_json, slice(ev.text));
            fieldBoolean(L, .awaiting_result, ev.awaiting_result != 0);
            // input: the decoded object; left nil if the text is not JSON (panto checks it).
            _ = c.lua_getfield(L, -1, "input_json");
            if (protectedCall(L, jsonDecode, 1, 1)) c.lua_setfield(L, -2, "input") else pop(L, 1);
        },
        c.PANTO_EVENT_TOOL_RESULT => {
            fieldString(L, .id, slice(ev.id));
            fieldString(L, .name, slice(ev.name));
            fieldString(L, .content, slice(ev.text));
            fieldBoolean(L, .is_error, ev.is_error != 0);
        },
        c.PANTO_EVENT_PROVIDER_RETRY => {
            fieldInteger(L, .attempt, ev.attempt);
            fieldInteger(L, .delay_ms, ev.delay_ms);
            if (ev.http_status != 0) fieldInteger(L, .http_status, ev.http_status);
            fieldString(L, .reason, slice(ev.text));
        },
        else => {}, // a kind newer than this module: only its name
    }
}

/// The stream's turn goes on: reads the next event. The stream's value is at index `si` (a
/// stack index or, in the iterator of events(), its upvalue).
fn fetchEvent(L: State, s: *Stream, si: c_int) c_int {
    // panto_next_event fills every field of an event of its size: nothing to clear first.
    var ev: c.PantoEvent = undefined;
    ev.size = @sizeOf(c.PantoEvent);
    const rc = c.panto_next_event(s.handle, &ev);
    if (rc == c.PANTO_EVENT) {
        pushEvent(L, &ev);
        if (ev.kind == c.PANTO_EVENT_TOOL_CALL_START and ev.awaiting_result != 0 and s.run_tools)
            rememberCall(L, s, si);
        return 1;
    }
    if (rc == c.PANTO_DONE) {
        // The turn is over: free the stream (and its connection) now rather than at __gc.
        releaseStream(s, .done);
        c.lua_pushnil(L);
        return 1;
    }
    if (rc == c.PANTO_ERR_RESULT_PENDING) {
        // Not sticky: the stream is unchanged.
        pushSimpleError(L, rc, "a tool call awaits its result: give it with stream:submit_tool_result(id, content) before the next event");
        return c.lua_error(L);
    }
    if (rc >= 0) return c.luaL_error(L, "panto_next_event returned the unexpected status %d", rc);
    var err = newError();
    _ = c.panto_stream_error(s.handle, &err);
    pushError(L, &err, rc);
    c.lua_pushvalue(L, -1);
    _ = c.lua_setiuservalue(L, si, uv_stream_error);
    // The handle stays for reopen(); the core closed the connection already.
    disarmTimer(s);
    s.phase = .failed;
    return c.lua_error(L);
}

/// The TOOL_CALL_START event at the top awaits a result: when its tool has a handler, the next
/// next() runs it. The stream's value at `si` (see fetchEvent).
fn rememberCall(L: State, s: *Stream, si: c_int) void {
    const ev = c.lua_absindex(L, -1);
    _ = c.lua_getiuservalue(L, si, uv_stream_agent);
    if (c.lua_getiuservalue(L, -1, uv_agent_handlers) != c.LUA_TTABLE) return pop(L, 2);
    _ = c.lua_getfield(L, ev, "name");
    if (c.lua_rawget(L, -2) == c.LUA_TNIL) return pop(L, 3);
    c.lua_createtable(L, 4, 0);
    c.lua_rotate(L, -2, 1);
    c.lua_rawseti(L, -2, pending_handler);
    _ = c.lua_getfield(L, ev, "id");
    c.lua_rawseti(L, -2, pending_id);
    _ = c.lua_getfield(L, ev, "name");
    c.lua_rawseti(L, -2, pending_name);
    c.lua_pushvalue(L, ev);
    c.lua_rawseti(L, -2, pending_event);
    _ = c.lua_setiuservalue(L, si, uv_stream_pending);
    s.may_have_pending = true;
    pop(L, 2);
}

/// stream:next(): the next event table, nil once the turn is over (and again after), or
/// raises the turn's panto.Error (the same table again on every later call). Before reading
/// on, runs the handler of the tool call the previous event announced.
fn streamNext(L: State) callconv(.c) c_int {
    const s = toStreamInMethod(L, 1);
    c.lua_settop(L, 1);
    return nextOf(L, s);
}

/// toStream in a stream method, which has the stream metatable as an upvalue: what
/// luaL_checkudata checks, without looking the metatable up by name in the registry.
fn toStreamInMethod(L: State, idx: c_int) *Stream {
    if (c.lua_type(L, idx) == c.LUA_TUSERDATA and c.lua_getmetatable(L, idx) != 0) {
        const same = c.lua_rawequal(L, -1, stream_metatable_upvalue) != 0;
        pop(L, 1);
        if (same) return @ptrCast(@alignCast(c.lua_touserdata(L, idx).?));
    }
    return toStream(L, idx); // raises the usual bad-argument error
}

/// The iterator of stream:events(): next() of the stream in the upvalue after the method
/// upvalues (so the generic for's arguments need no type check). An event of an open turn
/// with no tool call to run first, the usual case, is read with the stream left in its
/// upvalue: the for loop's arguments stay below the result, unread.
fn streamIterate(L: State) callconv(.c) c_int {
    const si = c.lua_upvalueindex(method_upvalues + 1);
    const s: *Stream = @ptrCast(@alignCast(c.lua_touserdata(L, si).?));
    if (s.phase == .open and !s.may_have_pending) return fetchEvent(L, s, si);
    c.lua_settop(L, 0);
    c.lua_pushvalue(L, si);
    return nextOf(L, s);
}

/// next() of the stream at index 1, the only value on the stack.
fn nextOf(L: State, s: *Stream) c_int {
    if (s.phase == .open and s.may_have_pending and c.lua_getiuservalue(L, 1, uv_stream_pending) == c.LUA_TTABLE) {
        s.may_have_pending = false;
        // Stack: stream, pending call. It runs once, whatever happens.
        c.lua_pushnil(L);
        _ = c.lua_setiuservalue(L, 1, uv_stream_pending);
        _ = c.lua_rawgeti(L, 2, pending_handler); // 3
        _ = c.lua_rawgeti(L, 2, pending_event); // 5 after the next line
        _ = c.lua_getfield(L, -1, "input");
        c.lua_rotate(L, -2, 1); // handler, input, event
        // lua_pcallk: the handler may yield when next() runs in a coroutine.
        return toolDone(L, c.lua_pcallk(L, 2, 2, 0, 0, toolDone), 0);
    }
    c.lua_settop(L, 1);
    return dispatch(L, s);
}

fn dispatch(L: State, s: *Stream) c_int {
    switch (s.phase) {
        .open => return fetchEvent(L, s, 1),
        .done => {
            c.lua_pushnil(L);
            return 1;
        },
        .failed => {
            _ = c.lua_getiuservalue(L, 1, uv_stream_error);
            return c.lua_error(L);
        },
        .closed => return c.luaL_error(L, "attempt to use a closed %s", stream_tname),
    }
}

/// The handler returned (or raised, or resumed after a yield): submits its result, then
/// reads on. Stack: stream, pending call, then the two results or the error value.
fn toolDone(L: State, status: c_int, ctx: c.lua_KContext) callconv(.c) c_int {
    _ = ctx;
    const s = toStream(L, 1);
    const ok = status == c.LUA_OK or status == c.LUA_YIELD;
    if (!ok) c.lua_settop(L, 3);
    // contentOf(ok, v1, v2) -> content, is_error; protected, since __tostring may raise.
    c.lua_pushboolean(L, @intFromBool(ok));
    c.lua_rotate(L, 3, 1);
    c.lua_settop(L, 5);
    if (!protectedCall(L, contentOf, 3, 2)) {
        const why: [*c]const u8 = if (c.lua_type(L, -1) == c.LUA_TSTRING) c.lua_tolstring(L, -1, null) else "an error value that is not a string";
        _ = c.lua_rawgeti(L, 2, pending_name);
        _ = c.lua_pushfstring(L, "panto: the result of tool '%s' cannot be sent: %s", c.lua_tolstring(L, -1, null), why);
        c.lua_pushboolean(L, 1);
    }
    // Stack top: content, is_error.
    if (s.phase == .open) {
        _ = c.lua_rawgeti(L, 2, pending_id);
        const rc = c.panto_stream_submit_tool_result(s.handle, c.lua_tolstring(L, -1, null), c.lua_tolstring(L, -3, null), c.lua_toboolean(L, -2));
        // NO_SUCH_CALL: the handler answered the call itself, with submit_tool_result.
        if (rc < 0 and rc != c.PANTO_ERR_NO_SUCH_CALL) {
            pushSimpleError(L, rc, "cannot submit the tool result");
            return c.lua_error(L);
        }
    }
    c.lua_settop(L, 1);
    return dispatch(L, s); // the handler may have closed the stream
}

/// Text of an error value: a string or number as is, else tostring (__tostring, __name).
fn pushErrorText(L: State, idx: c_int) void {
    switch (c.lua_type(L, idx)) {
        c.LUA_TSTRING => c.lua_pushvalue(L, idx),
        c.LUA_TNIL => _ = c.lua_pushstring(L, "error (no message)"),
        else => _ = c.luaL_tolstring(L, idx, null),
    }
}

/// contentOf(ok, v1, v2) -> content, is_error: a handler's outcome as a tool result. A
/// raised error or `return nil, err` is an error result with the error's text; a string is
/// the content; any other value its JSON.
fn contentOf(L: State) callconv(.c) c_int {
    c.lua_settop(L, 3);
    var is_error = false;
    if (c.lua_toboolean(L, 1) == 0) {
        pushErrorText(L, 2);
        is_error = true;
    } else if (isNil(L, 2) and !isNil(L, 3)) {
        pushErrorText(L, 3);
        is_error = true;
    } else if (c.lua_type(L, 2) == c.LUA_TSTRING) {
        c.lua_pushvalue(L, 2);
    } else {
        const w = newWriter(L);
        writeValue(L, w, 2, 0, null);
        pushWritten(L, w);
    }
    const text = toSlice(L, -1);
    if (std.mem.indexOfScalar(u8, text, 0) != null) fail(L, null, "it holds a NUL byte", .{});
    if (!std.unicode.utf8ValidateSlice(text)) fail(L, null, "it is not valid UTF-8", .{});
    c.lua_pushboolean(L, @intFromBool(is_error));
    return 2;
}

/// stream:submit_tool_result(id, content [, is_error]): gives the result of a tool call
/// announced by a tool_call_start event with awaiting_result. `content` is a string (other
/// values are sent as JSON). Raises a panto.Error with code "no_such_call" when no call with
/// that id awaits a result.
fn streamSubmit(L: State) callconv(.c) c_int {
    const s = toStream(L, 1);
    var id_len: usize = 0;
    const id = c.luaL_checklstring(L, 2, &id_len);
    c.luaL_checkany(L, 3);
    const is_error = optBoolean(L, 4);
    c.lua_settop(L, 3);
    if (std.mem.indexOfScalar(u8, id[0..id_len], 0) != null) _ = c.luaL_argerror(L, 2, "the id contains a NUL byte");
    if (c.lua_type(L, 3) != c.LUA_TSTRING) {
        const w = newWriter(L);
        writeValue(L, w, 3, 0, null);
        pushWritten(L, w);
        c.lua_copy(L, -1, 3);
        c.lua_settop(L, 3);
    }
    const content = toSlice(L, 3);
    if (std.mem.indexOfScalar(u8, content, 0) != null) _ = c.luaL_argerror(L, 3, "the content contains a NUL byte");
    switch (s.phase) {
        .open => {},
        .closed => return c.luaL_error(L, "attempt to use a closed %s", stream_tname),
        .done, .failed => {
            pushSimpleError(L, c.PANTO_ERR_NO_SUCH_CALL, "the turn is over: no tool call awaits a result");
            return c.lua_error(L);
        },
    }
    const rc = c.panto_stream_submit_tool_result(s.handle, id, content.ptr, @intFromBool(is_error));
    if (rc < 0) {
        _ = c.lua_pushfstring(L, "no tool call with the id '%s' awaits a result", id);
        pushSimpleError(L, rc, if (rc == c.PANTO_ERR_NO_SUCH_CALL) toSlice(L, -1) else "the tool result was refused");
        return c.lua_error(L);
    }
    // Answered by hand: the handler of that call does not run.
    if (c.lua_getiuservalue(L, 1, uv_stream_pending) == c.LUA_TTABLE) {
        _ = c.lua_rawgeti(L, -1, pending_id);
        if (c.lua_rawequal(L, -1, 2) != 0) {
            c.lua_pushnil(L);
            _ = c.lua_setiuservalue(L, 1, uv_stream_pending);
        }
    }
    return 0;
}

/// stream:events(): the generic-for quadruple `next, stream, nil, stream`. The fourth value is
/// to-be-closed, so leaving the loop early (break, error) closes the stream.
fn streamEvents(L: State) callconv(.c) c_int {
    const s = toStream(L, 1);
    if (s.phase == .closed) return c.luaL_error(L, "attempt to use a closed %s", stream_tname);
    pushOwnUpvalues(L);
    c.lua_pushvalue(L, 1);
    c.lua_pushcclosure(L, streamIterate, method_upvalues + 1);
    c.lua_pushvalue(L, 1);
    c.lua_pushnil(L);
    c.lua_pushvalue(L, 1);
    return 4;
}

/// stream:close(), __close and __gc: frees the stream. An unfinished turn is canceled first,
/// so what the model had said stays in the conversation (stop reason "aborted"). Safe to call
/// more than once.
fn streamClose(L: State) callconv(.c) c_int {
    const s = toStream(L, 1);
    if (s.phase == .open) {
        if (s.handle) |h| {
            disarmTimer(s);
            _ = c.panto_stream_cancel(h);
            // Returns at once (canceled): the core ends the turn and keeps the partial message.
            var ev = std.mem.zeroes(c.PantoEvent);
            ev.size = @sizeOf(c.PantoEvent);
            _ = c.panto_next_event(h, &ev);
        }
    }
    if (s.phase != .closed) releaseStream(s, .closed);
    c.lua_pushnil(L);
    _ = c.lua_setiuservalue(L, 1, uv_stream_pending);
    return 0;
}

/// stream:cancel(): cancels the turn; the next next() raises a panto.Error with code
/// "canceled" and what the model had said stays in the conversation (stop reason "aborted").
/// Harmless on a turn that is over or a closed stream.
fn streamCancel(L: State) callconv(.c) c_int {
    const s = toStream(L, 1);
    if (s.phase == .open) {
        if (s.handle) |h| _ = c.panto_stream_cancel(h);
    }
    return 0;
}

/// stream:cancel_after(ms): cancels the turn `ms` milliseconds from now, from a native thread,
/// so that a next() blocked meanwhile returns (raising "canceled"). One timer per stream: a
/// second call replaces the first. The timer stops when the turn ends or the stream is closed.
/// Returns the stream.
fn streamCancelAfter(L: State) callconv(.c) c_int {
    const s = toStream(L, 1);
    const ms = c.luaL_checknumber(L, 2);
    if (!(ms >= 0 and ms <= max_cancel_after_ms)) _ = c.luaL_argerror(L, 2, "ms must be a number from 0 to 30 days");
    c.lua_settop(L, 1);
    switch (s.phase) {
        .closed => return c.luaL_error(L, "attempt to use a closed %s", stream_tname),
        .done, .failed => return 1, // nothing left to cancel
        .open => {},
    }
    disarmTimer(s);
    s.timer = armTimer(s.handle.?, ms) orelse return c.luaL_error(L, "panto: cannot start the timer thread of cancel_after");
    return 1;
}

/// stream:reopen(): runs a turn that failed at the provider-open boundary (an HTTP error
/// answer, a connection failure before any event) again, typically after agent:set_config.
/// Returns true; raises a panto.Error with code "state" when the turn did not fail that way,
/// "busy" when another stream of the agent is unfinished.
fn streamReopen(L: State) callconv(.c) c_int {
    const s = toStream(L, 1);
    c.lua_settop(L, 1);
    const h = switch (s.phase) {
        .closed => return c.luaL_error(L, "attempt to use a closed %s", stream_tname),
        .done => null,
        .open, .failed => s.handle,
    } orelse {
        pushSimpleError(L, c.PANTO_ERR_STATE, "the turn is over: only a turn that failed when opening the provider call can be reopened");
        return c.lua_error(L);
    };
    const rc = c.panto_stream_reopen(h);
    if (rc < 0) {
        pushSimpleError(L, rc, switch (rc) {
            c.PANTO_ERR_STATE => "only a turn that failed when opening the provider call (an HTTP error answer, a connection failure) can be reopened",
            c.PANTO_ERR_BUSY => "another stream of the agent is unfinished: finish or close it first",
            else => "the stream cannot be reopened",
        });
        return c.lua_error(L);
    }
    s.phase = .open;
    c.lua_pushnil(L);
    _ = c.lua_setiuservalue(L, 1, uv_stream_error);
    c.lua_pushnil(L);
    _ = c.lua_setiuservalue(L, 1, uv_stream_pending);
    c.lua_pushboolean(L, 1);
    return 1;
}

fn streamToString(L: State) callconv(.c) c_int {
    const s = toStream(L, 1);
    switch (s.phase) {
        .closed => _ = c.lua_pushstring(L, "panto.Stream (closed)"),
        .open => _ = c.lua_pushfstring(L, "panto.Stream (%p)", @as(*const anyopaque, s.handle.?)),
        .done => _ = c.lua_pushfstring(L, "panto.Stream (%p, done)", @as(*const anyopaque, s)),
        .failed => _ = c.lua_pushfstring(L, "panto.Stream (%p, failed)", @as(*const anyopaque, s)),
    }
    return 1;
}

// ---- panto.Error --------------------------------------------------------------------------

/// "panto: authentication: bad key (HTTP 401, authentication_error, request_id req_1)"
fn errorToString(L: State) callconv(.c) c_int {
    c.luaL_checktype(L, 1, c.LUA_TTABLE);
    c.lua_settop(L, 1);
    const code = c.lua_getfield(L, 1, "code"); // 2
    const message = c.lua_getfield(L, 1, "message"); // 3
    const http_status = c.lua_getfield(L, 1, "http_status"); // 4
    const typ = c.lua_getfield(L, 1, "type"); // 5
    const request_id = c.lua_getfield(L, 1, "request_id"); // 6
    _ = c.lua_pushstring(L, "panto: ");
    var n: c_int = 1;
    if (code == c.LUA_TSTRING) {
        _ = c.lua_pushfstring(L, "%s: ", c.lua_tolstring(L, 2, null));
        n += 1;
    }
    if (message == c.LUA_TSTRING) c.lua_pushvalue(L, 3) else _ = c.lua_pushstring(L, "error");
    n += 1;
    var details: c_int = 0;
    if (http_status == c.LUA_TNUMBER) {
        _ = c.lua_pushfstring(L, " (HTTP %I", c.lua_tointegerx(L, 4, null));
        details += 1;
    }
    if (typ == c.LUA_TSTRING) {
        _ = c.lua_pushfstring(L, "%s%s", @as([*:0]const u8, if (details == 0) " (" else ", "), c.lua_tolstring(L, 5, null));
        details += 1;
    }
    if (request_id == c.LUA_TSTRING) {
        _ = c.lua_pushfstring(L, "%srequest_id %s", @as([*:0]const u8, if (details == 0) " (" else ", "), c.lua_tolstring(L, 6, null));
        details += 1;
    }
    if (details > 0) _ = c.lua_pushstring(L, ")");
    c.lua_concat(L, n + details + @intFromBool(details > 0));
    return 1;
}

// ---- The module -------------------------------------------------------------------------

fn reg(comptime name: [*:0]const u8, comptime f: c.lua_CFunction) c.luaL_Reg {
    return .{ .name = name, .func = f };
}
const reg_end: c.luaL_Reg = .{ .name = null, .func = null };

const agent_meta = [_]c.luaL_Reg{
    reg("__gc", agentClose),
    reg("__close", agentClose),
    reg("__tostring", agentToString),
    reg_end,
};
const agent_methods = [_]c.luaL_Reg{
    reg("run", agentRun),
    reg("conversation", agentConversation),
    reg("connections", agentConnections),
    reg("add_tool", agentAddTool),
    reg("set_config", agentSetConfig),
    reg("tools", agentTools),
    reg("close", agentClose),
    reg_end,
};
const stream_meta = [_]c.luaL_Reg{
    reg("__gc", streamClose),
    reg("__close", streamClose),
    reg("__tostring", streamToString),
    reg_end,
};
const stream_methods = [_]c.luaL_Reg{
    reg("next", streamNext),
    reg("events", streamEvents),
    reg("submit_tool_result", streamSubmit),
    reg("cancel", streamCancel),
    reg("cancel_after", streamCancelAfter),
    reg("reopen", streamReopen),
    reg("close", streamClose),
    reg_end,
};
const registry_meta = [_]c.luaL_Reg{
    reg("__len", registryLen),
    reg("__tostring", registryToString),
    reg_end,
};
const registry_methods = [_]c.luaL_Reg{
    reg("register", registryRegister),
    reg("get", registryGet),
    reg("list", registryList),
    reg("filter", registryFilter),
    reg("export", registryExport),
    reg_end,
};
const error_meta = [_]c.luaL_Reg{
    reg("__tostring", errorToString),
    reg_end,
};
const writer_meta = [_]c.luaL_Reg{
    reg("__gc", writerGc),
    reg_end,
};
const arena_meta = [_]c.luaL_Reg{
    reg("__gc", arenaGc),
    reg_end,
};
const array_meta = [_]c.luaL_Reg{reg_end};

/// Creates the metatable `tname` in the registry unless it exists (a second load of the
/// module shares it). The methods get the stream method upvalues when `is_stream`.
fn createMetatable(L: State, tname: [*:0]const u8, meta: []const c.luaL_Reg, methods: ?[]const c.luaL_Reg, is_stream: bool) void {
    if (c.luaL_newmetatable(L, tname) != 0) {
        const mt = c.lua_absindex(L, -1);
        c.luaL_setfuncs(L, meta.ptr, 0);
        if (methods) |m| {
            c.lua_createtable(L, 0, @intCast(m.len - 1));
            if (is_stream) pushMethodUpvalues(L, mt);
            c.luaL_setfuncs(L, m.ptr, if (is_stream) method_upvalues else 0);
            c.lua_setfield(L, -2, "__index");
        }
    }
    c.lua_settop(L, -2);
}

const DlInfo = extern struct {
    fname: ?[*:0]const u8,
    fbase: ?*anyopaque,
    sname: ?[*:0]const u8,
    saddr: ?*anyopaque,
};
extern "c" fn dladdr(addr: ?*const anyopaque, info: *DlInfo) c_int;

var pinned = false;

/// Keeps this shared object loaded for the life of the process. panto's core starts a
/// process-wide thread (the timeout watchdog) that runs code and uses globals of this object;
/// Lua dlcloses a C module when its state closes, so a host that closes a state and opens
/// another (lupa, a server with a state per request) would unmap that code under the thread,
/// or map it again with fresh globals while the old thread still waits on them.
fn pinModule() void {
    if (pinned) return;
    pinned = true;
    var info: DlInfo = undefined;
    if (dladdr(@ptrCast(&luaopen_panto), &info) == 0) return;
    const path = info.fname orelse return;
    // NOLOAD: only a new reference to the object already loaded; NODELETE: never unmapped.
    _ = std.c.dlopen(path, .{ .NOW = true, .NOLOAD = true, .NODELETE = true });
}

/// require("panto"): a fresh module table on every call.
export fn luaopen_panto(L: State) c_int {
    pinModule();
    // luaL_checkversion is a macro: the same call, with the sizes this module was built with.
    c.luaL_checkversion_(L, c.LUA_VERSION_NUM, @sizeOf(c.lua_Integer) * 16 + @sizeOf(c.lua_Number));
    if (c.panto_abi_version() != c.PANTO_ABI_VERSION)
        return c.luaL_error(L, "panto: ABI version %d, but this module was built for %d", @as(c_int, @intCast(c.panto_abi_version())), @as(c_int, c.PANTO_ABI_VERSION));

    createMetatable(L, agent_tname, &agent_meta, &agent_methods, false);
    createMetatable(L, stream_tname, &stream_meta, &stream_methods, true);
    createMetatable(L, registry_tname, &registry_meta, &registry_methods, false);
    createMetatable(L, error_tname, &error_meta, null, false);
    createMetatable(L, writer_tname, &writer_meta, null, false);
    createMetatable(L, arena_tname, &arena_meta, null, false);
    createMetatable(L, array_tname, &array_meta, null, false);

    c.lua_createtable(L, 0, 10);
    setCString(L, "_VERSION", c.panto_version());
    setInteger(L, "abi_version", c.panto_abi_version());
    pushNull(L);
    c.lua_setfield(L, -2, "null");
    const funcs = [_]c.luaL_Reg{
        reg("Agent", agentNew),
        reg("Registry", registryNew),
        reg("tool_schema", toolSchema),
        reg("array", markArray),
        reg("json_encode", jsonEncode),
        reg("json_decode", jsonDecode),
        reg_end,
    };
    c.luaL_setfuncs(L, &funcs, 0);
    return 1;
}
