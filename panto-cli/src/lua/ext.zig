//! require('panto') in the command's Lua state, and `panto.ext`: the loader in
//! package.preload['panto'] calls the native luaopen_panto (the same module as libpanto-lua's
//! panto.so, compiled in), takes the fresh table it returns and adds `ext`:
//!
//!   ext.tool{...}                  a tool the model can call (panto.Agent's tool declaration)
//!   ext.command{name=, description=, handler=}   a slash command: handler(args, ctx)
//!   ext.on(event, fn)              fn(data, event) for the agent's events and custom ones
//!   ext.emit(event, data)          a custom event to the ext.on subscribers
//!   ext.exec(cmd [, opts])         a process run to its end (yields inside a tool handler)
//!   ext.mkdir(path)                a folder and its missing parents
//!   ext.check_path(path)           the file tools' path rule: inside the working directory
//!   ext.ui.notify/confirm/select/input/status   the user's screen (ext_ui.zig)
//!
//! A command's handler(args, ctx), a subscriber's fn(data, event, ctx) and a tool's
//! handler(input, event, ctx) get a ctx (Host.pushCtx): print, send, set_model, ui.
//!
//! Every function has the Host as its upvalue 1.
const std = @import("std");
const c = @import("c");
const panto = @import("panto");
const embed = @import("panto_lua").embed;
const Host = @import("host.zig").Host;
const exec = @import("exec.zig");
const p = @import("protect.zig");
const ext_ui = @import("ext_ui.zig");

const State = p.State;
const toSlice = p.toSlice;
const pop = p.pop;

extern fn luaopen_panto(L: State) c_int;

fn hostOf(L: State) *Host {
    return @ptrCast(@alignCast(c.lua_touserdata(L, c.lua_upvalueindex(1)).?));
}

/// Raises "<fmt>" with a message made in a stack buffer (no Zig memory is live when it raises).
fn raise(L: State, comptime fmt: []const u8, args: anytype) noreturn {
    var buf: [400]u8 = undefined;
    const msg = std.fmt.bufPrintZ(&buf, fmt, args) catch buf[0 .. buf.len - 1 :0];
    _ = c.luaL_error(L, "%s", msg.ptr);
    unreachable;
}

fn isCallable(L: State, idx: c_int) bool {
    if (c.lua_type(L, idx) == c.LUA_TFUNCTION) return true;
    if (c.luaL_getmetafield(L, idx, "__call") == c.LUA_TNIL) return false;
    pop(L, 1);
    return true;
}

/// package.preload['panto']: the native module's fresh table, with `ext`.
pub fn loader(L: State) callconv(.c) c_int {
    const host = hostOf(L);
    c.lua_settop(L, 0);
    c.lua_pushcclosure(L, luaopen_panto, 0);
    _ = c.lua_pushstring(L, "panto");
    c.lua_callk(L, 1, 1, 0, null);
    c.lua_createtable(L, 0, functions.len);
    c.lua_pushlightuserdata(L, host);
    c.luaL_setfuncs(L, &functions, 1);
    c.lua_createtable(L, 0, ext_ui.functions.len);
    c.lua_pushlightuserdata(L, host);
    c.luaL_setfuncs(L, &ext_ui.functions, 1);
    c.lua_setfield(L, -2, "ui");
    c.lua_setfield(L, -2, "ext");
    return 1;
}

const functions = [_]c.luaL_Reg{
    .{ .name = "tool", .func = extTool },
    .{ .name = "command", .func = extCommand },
    .{ .name = "on", .func = extOn },
    .{ .name = "emit", .func = extEmit },
    .{ .name = "exec", .func = extExec },
    .{ .name = "mkdir", .func = extMkdir },
    .{ .name = "check_path", .func = extCheckPath },
    .{ .name = null, .func = null },
};

/// ext.tool{name=, description=, params= | schema=, capabilities=, sequential=, handler=}:
/// the declaration of panto.Agent's tools (libpanto-lua), checked by panto as a tool spec.
/// A name registered again replaces the earlier tool (a user's `bash` replaces the bundled).
fn extTool(L: State) callconv(.c) c_int {
    const host = hostOf(L);
    c.luaL_checktype(L, 1, c.LUA_TTABLE);
    c.lua_settop(L, 1);
    c.lua_pushcclosure(L, embed.toolSpec, 0);
    c.lua_pushvalue(L, 1);
    c.lua_callk(L, 1, 3, 0, null); // 2 spec, 3 name, 4 handler
    if (c.lua_type(L, 3) != c.LUA_TSTRING) return c.luaL_error(L, "ext.tool: a tool needs a name (a string)");
    const name = toSlice(L, 3);
    if (c.lua_type(L, 4) == c.LUA_TNIL) raise(L, "tool '{s}': ext.tool needs a handler", .{name});
    var diag: Host.Diagnostic = .{};
    host.registerTool(name, toSlice(L, 2), &diag) catch raise(L, "tool '{s}': {s}", .{ name, diag.message() });
    host.pushHandlers(L);
    c.lua_pushvalue(L, 3);
    // handler(input, event, ctx): the runner calls (input, event); this closure adds ctx.
    c.lua_pushvalue(L, 4);
    host.pushCtx(L, .handler);
    c.lua_pushcclosure(L, withCtx, 2);
    c.lua_rawset(L, -3);
    return 0;
}

/// A tool handler called with its ctx (upvalue 2) after the runner's two arguments. The call
/// may yield (ext.exec, panto.sleep): its results come back through the continuation.
fn withCtx(L: State) callconv(.c) c_int {
    c.lua_settop(L, 2);
    c.lua_pushvalue(L, c.lua_upvalueindex(1));
    c.lua_rotate(L, 1, 1); // handler, input, event
    c.lua_pushvalue(L, c.lua_upvalueindex(2));
    c.lua_callk(L, 3, c.LUA_MULTRET, 0, withCtxDone);
    return c.lua_gettop(L);
}

fn withCtxDone(L: State, status: c_int, ctx: c.lua_KContext) callconv(.c) c_int {
    _ = status;
    _ = ctx;
    return c.lua_gettop(L);
}

/// ext.command{name=, description=, handler=}: a slash command /name; handler(args, ctx)
/// gets the text after the name, ctx.print(...) writes a line, a returned string is written.
fn extCommand(L: State) callconv(.c) c_int {
    const host = hostOf(L);
    c.luaL_checktype(L, 1, c.LUA_TTABLE);
    c.lua_settop(L, 1);
    c.lua_pushnil(L);
    while (c.lua_next(L, 1) != 0) {
        const known = c.lua_type(L, -2) == c.LUA_TSTRING and for ([_][]const u8{ "name", "description", "handler" }) |k| {
            if (std.mem.eql(u8, toSlice(L, -2), k)) break true;
        } else false;
        if (!known) return c.luaL_error(L, "ext.command: unknown key '%s' (the keys are name, description, handler)", c.luaL_tolstring(L, -2, null));
        pop(L, 1);
    }
    if (c.lua_getfield(L, 1, "name") != c.LUA_TSTRING) return c.luaL_error(L, "ext.command: 'name' must be a string");
    const name = toSlice(L, 2);
    if (!validCommandName(name)) raise(L, "ext.command: '{s}' is not a command name (letters, digits, '_', '-', '.', 1 to 64)", .{name});
    const description_type = c.lua_getfield(L, 1, "description"); // 3
    if (description_type != c.LUA_TSTRING and description_type != c.LUA_TNIL) raise(L, "command '{s}': 'description' must be a string", .{name});
    _ = c.lua_getfield(L, 1, "handler"); // 4
    if (!isCallable(L, 4)) raise(L, "command '{s}': 'handler' must be a function", .{name});
    host.registerCommand(name, if (description_type == c.LUA_TSTRING) toSlice(L, 3) else "") catch
        return c.luaL_error(L, "not enough memory");
    host.pushCommandHandlers(L);
    c.lua_pushvalue(L, 2);
    c.lua_pushvalue(L, 4);
    c.lua_rawset(L, -3);
    return 0;
}

fn validCommandName(name: []const u8) bool {
    if (name.len == 0 or name.len > 64) return false;
    for (name) |ch| if (!(std.ascii.isAlphanumeric(ch) or ch == '_' or ch == '-' or ch == '.')) return false;
    return true;
}

/// ext.on(event, fn): fn(data, event) for each such event ("*": every event). Returns a
/// function that unsubscribes.
fn extOn(L: State) callconv(.c) c_int {
    const host = hostOf(L);
    _ = c.luaL_checklstring(L, 1, null);
    if (!isCallable(L, 2)) return c.luaL_argerror(L, 2, "a function");
    c.lua_settop(L, 2);
    host.subscribe(L, 1, 2);
    c.lua_pushvalue(L, c.lua_upvalueindex(1));
    c.lua_pushvalue(L, 1);
    c.lua_pushvalue(L, 2);
    c.lua_pushcclosure(L, extOff, 3);
    return 1;
}

fn extOff(L: State) callconv(.c) c_int {
    hostOf(L).unsubscribe(L, c.lua_upvalueindex(2), c.lua_upvalueindex(3));
    return 0;
}

/// ext.emit(event, data): calls the subscribers of `event` with (data, event) now. A
/// subscriber that raises is reported; the others still run.
fn extEmit(L: State) callconv(.c) c_int {
    const host = hostOf(L);
    _ = c.luaL_checklstring(L, 1, null);
    c.lua_settop(L, 2);
    host.dispatch(L, 1, 2);
    return 0;
}

/// ext.mkdir(path): creates the folder and its missing parents. true, or nil and a message.
fn extMkdir(L: State) callconv(.c) c_int {
    const host = hostOf(L);
    var len: usize = 0;
    const path = c.luaL_checklstring(L, 1, &len);
    std.Io.Dir.cwd().createDirPath(host.io, path[0..len]) catch |err| {
        // A symlink to a folder is one (createDirPath does not follow it).
        if (std.Io.Dir.cwd().openDir(host.io, path[0..len], .{})) |d| {
            d.close(host.io);
            c.lua_pushboolean(L, 1);
            return 1;
        } else |_| {}
        c.lua_pushnil(L);
        _ = c.lua_pushfstring(L, "%s: cannot create the folder (%s)", path, @errorName(err).ptr);
        return 2;
    };
    c.lua_pushboolean(L, 1);
    return 1;
}

/// ext.check_path(path): the rule every file tool follows (the core's path_rule, as the native
/// read tool): `path`, relative or absolute, must be inside the working directory, and
/// symlinks in what exists of it must not lead out. Returns the path relative to the working
/// directory, or nil and a message that names the rule.
fn extCheckPath(L: State) callconv(.c) c_int {
    const host = hostOf(L);
    var len: usize = 0;
    const ptr = c.luaL_checklstring(L, 1, &len);
    const given = ptr[0..len];
    if (panto.path_rule.check(host.gpa, ".", given)) |rel| {
        p.pushSlice(L, rel);
        return 1;
    } else |err| {
        c.lua_pushnil(L);
        const msg = switch (err) {
            error.OutOfMemory => return c.luaL_error(L, "not enough memory"),
            error.NoRoot => panto.path_rule.refusal(host.gpa, given, "working directory (which cannot be opened)"),
            error.OutsideRoot => panto.path_rule.refusal(host.gpa, given, "working directory"),
        } catch return c.luaL_error(L, "not enough memory");
        defer host.gpa.free(msg);
        p.pushSlice(L, msg);
        return 2;
    }
}

/// ext.exec(cmd [, {timeout=, cwd=, max_output=, keep=, save_output=, progress=}]): runs `cmd` (a string
/// for /bin/sh -c, or a list: the program and its arguments) to its end in a process group of
/// its own, stdin /dev/null, stdout and stderr together. Returns {status=, signal=, output=,
/// output_bytes=, output_lines=, output_file=, truncated=, timed_out=, canceled=}, or nil and
/// a message when it cannot start. Inside a
/// tool handler the handler yields while the command runs (the round's other calls go on);
/// elsewhere it waits. A timeout or a cancel (Ctrl-C) kills the whole group.
fn extExec(L: State) callconv(.c) c_int {
    const host = hostOf(L);
    var options: exec.Options = .{ .argv = &.{} };
    var argv_buf: [256][]const u8 = undefined;
    switch (c.lua_type(L, 1)) {
        c.LUA_TSTRING => {
            argv_buf[0] = "/bin/sh";
            argv_buf[1] = "-c";
            argv_buf[2] = toSlice(L, 1);
            options.argv = argv_buf[0..3];
        },
        c.LUA_TTABLE => {
            const n = c.lua_rawlen(L, 1);
            if (n == 0 or n > argv_buf.len) return c.luaL_argerror(L, 1, "a list of 1 to 256 strings");
            for (0..n) |i| {
                if (c.lua_rawgeti(L, 1, @intCast(i + 1)) != c.LUA_TSTRING) return c.luaL_argerror(L, 1, "a list of strings");
                argv_buf[i] = toSlice(L, -1); // alive in the table
                pop(L, 1);
            }
            options.argv = argv_buf[0..n];
        },
        else => return c.luaL_argerror(L, 1, "a command string or a list of strings"),
    }
    readOptions(L, &options);
    c.lua_settop(L, 2);
    var why: []const u8 = "";
    const ch = host.spawnChild(options, &why) catch |err| {
        c.lua_pushnil(L);
        var buf: [300]u8 = undefined;
        const msg = std.fmt.bufPrint(&buf, "cannot start '{s}': {s}", .{ options.argv[0], if (err == error.OutOfMemory) "not enough memory" else why }) catch "cannot start the command";
        p.pushSlice(L, msg);
        return 2;
    };
    if (host.suspendForChild(L, ch)) return c.lua_yieldk(L, 0, @intCast(@intFromPtr(ch)), execContinue);
    host.waitForChild(L, ch);
    return pushOutcome(L, host, ch);
}

fn execContinue(L: State, status: c_int, ctx: c.lua_KContext) callconv(.c) c_int {
    _ = status;
    const ch: *exec.Child = @ptrFromInt(@as(usize, @intCast(ctx)));
    return pushOutcome(L, hostOf(L), ch);
}

/// The outcome table of a finished child, which is let go.
fn pushOutcome(L: State, host: *Host, ch: *exec.Child) c_int {
    c.lua_createtable(L, 0, 9);
    if (ch.exitCode()) |code| {
        c.lua_pushinteger(L, code);
        c.lua_setfield(L, -2, "status");
    }
    if (ch.signal()) |sig| {
        c.lua_pushinteger(L, sig);
        c.lua_setfield(L, -2, "signal");
    }
    p.pushSlice(L, ch.kept());
    c.lua_setfield(L, -2, "output");
    c.lua_pushinteger(L, @intCast(@min(ch.output_bytes, std.math.maxInt(i64))));
    c.lua_setfield(L, -2, "output_bytes");
    c.lua_pushinteger(L, @intCast(@min(ch.output_lines, std.math.maxInt(i64))));
    c.lua_setfield(L, -2, "output_lines");
    if (ch.savedPath()) |path| {
        p.pushSlice(L, path);
        c.lua_setfield(L, -2, "output_file");
    }
    inline for (.{ .{ "truncated", ch.truncated() }, .{ "timed_out", ch.timed_out }, .{ "canceled", ch.canceled } }) |f| {
        c.lua_pushboolean(L, @intFromBool(f[1]));
        c.lua_setfield(L, -2, f[0]);
    }
    host.releaseChild(L, ch);
    return 1;
}

fn readOptions(L: State, options: *exec.Options) void {
    if (c.lua_type(L, 2) <= c.LUA_TNIL) return;
    c.luaL_checktype(L, 2, c.LUA_TTABLE);
    c.lua_pushnil(L);
    while (c.lua_next(L, 2) != 0) {
        const key = if (c.lua_type(L, -2) == c.LUA_TSTRING) toSlice(L, -2) else "";
        if (std.mem.eql(u8, key, "timeout")) {
            const t = c.lua_tonumberx(L, -1, null);
            if (c.lua_type(L, -1) != c.LUA_TNUMBER or !(t > 0)) _ = c.luaL_argerror(L, 2, "timeout must be a number of seconds > 0");
            options.timeout = t;
        } else if (std.mem.eql(u8, key, "cwd")) {
            if (c.lua_type(L, -1) != c.LUA_TSTRING) _ = c.luaL_argerror(L, 2, "cwd must be a string");
            options.cwd = toSlice(L, -1); // alive in the table
        } else if (std.mem.eql(u8, key, "max_output")) {
            var isint: c_int = 0;
            const n = c.lua_tointegerx(L, -1, &isint);
            if (isint == 0 or n < 0) _ = c.luaL_argerror(L, 2, "max_output must be a number of bytes >= 0");
            options.max_output = @intCast(n);
        } else if (std.mem.eql(u8, key, "keep")) {
            const which = if (c.lua_type(L, -1) == c.LUA_TSTRING) toSlice(L, -1) else "";
            if (!std.mem.eql(u8, which, "head") and !std.mem.eql(u8, which, "tail")) _ = c.luaL_argerror(L, 2, "keep must be \"head\" or \"tail\"");
            options.keep_tail = std.mem.eql(u8, which, "tail");
        } else if (std.mem.eql(u8, key, "save_output")) {
            if (c.lua_type(L, -1) != c.LUA_TBOOLEAN) _ = c.luaL_argerror(L, 2, "save_output must be a boolean");
            options.save_output = c.lua_toboolean(L, -1) != 0;
        } else if (std.mem.eql(u8, key, "progress")) {
            if (c.lua_type(L, -1) != c.LUA_TSTRING) _ = c.luaL_argerror(L, 2, "progress must be a tool call's id (a string)");
            options.progress_id = toSlice(L, -1); // alive in the table
        } else {
            _ = c.luaL_argerror(L, 2, "unknown option (the options are timeout, cwd, max_output, keep, save_output, progress)");
        }
        pop(L, 1);
    }
}
