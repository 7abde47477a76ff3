//! `ext.ui`: what an extension shows or asks on the user's screen, and the Frontend the mode
//! gives the Host to do it (interactive mode: the terminal; none in print and RPC mode):
//!
//!   ext.ui.notify(text [, level])    a line on the screen ("info", "warning", "error")
//!   ext.ui.confirm(title, text)      true or false: the user's answer (y/n)
//!   ext.ui.select(title, options)    the option picked (a string), or nil (Esc)
//!   ext.ui.input(title [, placeholder])   the text typed (Enter), or nil (Esc)
//!   ext.ui.status(key, text)         a segment of the status line; nil or "" takes it off
//!
//! Without a frontend (print mode, or while the extensions load): notify writes to the report
//! writer (stderr), confirm is false, select and input nil, each with a note there saying so;
//! status is kept and shown by the interactive status line only. RPC mode's frontend asks its
//! client (rpc_mode.zig).
const std = @import("std");
const c = @import("c");
const Host = @import("host.zig").Host;
const p = @import("protect.zig");

const State = p.State;

pub const Level = enum { info, warning, @"error" };

/// What the mode offers the extensions. Each function runs on the thread running Lua (the
/// main thread), while a command, a tool handler or an event handler runs.
pub const Frontend = struct {
    ctx: *anyopaque,
    vtable: *const VTable,

    pub const VTable = struct {
        notify: *const fn (ctx: *anyopaque, level: Level, text: []const u8) void,
        /// null: the question could not be asked (no terminal).
        confirm: *const fn (ctx: *anyopaque, title: []const u8, text: []const u8) ?bool,
        /// The index of the option picked; null: none (Esc, or no terminal).
        select: *const fn (ctx: *anyopaque, title: []const u8, options: []const []const u8) ?usize,
        /// The text typed (owned by the Host's gpa: the caller frees it); null: none (Esc,
        /// or no terminal).
        input: *const fn (ctx: *anyopaque, title: []const u8, placeholder: []const u8) ?[]u8,
        /// ctx.send: a user message. A command's: a turn after the command, or a steer of the
        /// turn that runs; a handler's: a follow-up of the turn that runs, or a turn next.
        /// A refusal's reason is returned.
        send: *const fn (ctx: *anyopaque, text: []const u8, from: Host.CtxKind) ?[]const u8,
        /// ctx.set_model of a command: "[provider:]name". A refusal's reason is returned.
        set_model: *const fn (ctx: *anyopaque, spec: []const u8) ?[]const u8,
        /// ext.ui.status changed a segment (RPC mode tells its client); null: the status line
        /// reads the Host's segments when it is drawn.
        status: ?*const fn (ctx: *anyopaque, key: []const u8, text: []const u8) void = null,
    };
};

/// A status line segment an extension set (ext.ui.status).
pub const Segment = struct { key: []u8, text: []u8 };

pub const functions = [_]c.luaL_Reg{
    .{ .name = "notify", .func = notify },
    .{ .name = "confirm", .func = confirm },
    .{ .name = "select", .func = select },
    .{ .name = "input", .func = input },
    .{ .name = "status", .func = status },
    .{ .name = null, .func = null },
};

fn hostOf(L: State) *Host {
    return @ptrCast(@alignCast(c.lua_touserdata(L, c.lua_upvalueindex(1)).?));
}

/// The string argument at `idx`; `default` when it is nil or absent.
fn optString(L: State, idx: c_int, default: []const u8) []const u8 {
    if (c.lua_type(L, idx) <= c.LUA_TNIL) return default;
    var len: usize = 0;
    return c.luaL_checklstring(L, idx, &len)[0..len];
}

fn checkString(L: State, idx: c_int) []const u8 {
    var len: usize = 0;
    return c.luaL_checklstring(L, idx, &len)[0..len];
}

fn notify(L: State) callconv(.c) c_int {
    const host = hostOf(L);
    const text = checkString(L, 1);
    const level_name = optString(L, 2, "info");
    const level = std.meta.stringToEnum(Level, level_name) orelse
        return c.luaL_argerror(L, 2, "\"info\", \"warning\" or \"error\"");
    if (host.frontend) |f| {
        f.vtable.notify(f.ctx, level, text);
    } else switch (level) {
        .info => host.reportLine("{s}", .{text}),
        else => host.reportLine("{s}: {s}", .{ @tagName(level), text }),
    }
    return 0;
}

fn confirm(L: State) callconv(.c) c_int {
    const host = hostOf(L);
    const title = checkString(L, 1);
    const text = optString(L, 2, "");
    const answer = if (host.frontend) |f| f.vtable.confirm(f.ctx, title, text) else null;
    if (answer == null) host.reportLine("ext.ui.confirm \"{s}\": {s}: false", .{ title, unanswered(host) });
    c.lua_pushboolean(L, @intFromBool(answer orelse false));
    return 1;
}

fn select(L: State) callconv(.c) c_int {
    const host = hostOf(L);
    const title = checkString(L, 1);
    c.luaL_checktype(L, 2, c.LUA_TTABLE);
    const n = c.lua_rawlen(L, 2);
    if (n == 0 or n > 256) return c.luaL_argerror(L, 2, "a list of 1 to 256 strings");
    var options: [256][]const u8 = undefined;
    for (0..n) |i| {
        if (c.lua_rawgeti(L, 2, @intCast(i + 1)) != c.LUA_TSTRING) return c.luaL_argerror(L, 2, "a list of strings");
        options[i] = p.toSlice(L, -1); // alive in the table
        p.pop(L, 1);
    }
    const picked = if (host.frontend) |f| f.vtable.select(f.ctx, title, options[0..n]) else blk: {
        host.reportLine("ext.ui.select \"{s}\": {s}: nil", .{ title, unanswered(host) });
        break :blk null;
    };
    if (picked) |i| _ = c.lua_rawgeti(L, 2, @intCast(i + 1)) else c.lua_pushnil(L);
    return 1;
}

fn input(L: State) callconv(.c) c_int {
    const host = hostOf(L);
    const title = checkString(L, 1);
    const placeholder = optString(L, 2, "");
    const typed = if (host.frontend) |f| f.vtable.input(f.ctx, title, placeholder) else null;
    if (typed) |text| {
        defer host.gpa.free(text);
        p.pushSlice(L, text);
    } else {
        // Esc in interactive mode is an answer: no note. Else nobody could answer.
        if (host.frontend == null) host.reportLine("ext.ui.input \"{s}\": {s}: nil", .{ title, unanswered(host) });
        c.lua_pushnil(L);
    }
    return 1;
}

fn status(L: State) callconv(.c) c_int {
    const host = hostOf(L);
    const key = checkString(L, 1);
    const text = optString(L, 2, "");
    host.setStatus(key, text) catch return c.luaL_error(L, "not enough memory");
    if (host.frontend) |f| if (f.vtable.status) |changed| changed(f.ctx, key, text);
    return 0;
}

/// Why a question got no answer: no one to ask, or the one asked gave none (an RPC client
/// gone, a terminal closed, an abort).
fn unanswered(host: *const Host) []const u8 {
    return if (host.frontend == null) "no terminal to ask on" else "not answered";
}
