//! The Lua 5.4 state of the command: require('panto') with panto.ext (ext.zig), the
//! extensions (bundled, ~/.config/panto/extensions, ./.panto/extensions, -e files), what they
//! registered (tools, commands, subscribers), and the tool calls handed to them
//! (tool_runner.zig). docs/cli.md, "Extensions" and "Tools", is the user's side of it.
const std = @import("std");
const c = @import("c");
const panto = @import("panto");
const ext = @import("ext.zig");
const exec = @import("exec.zig");
const p = @import("protect.zig");
const tool_runner = @import("tool_runner.zig");
const interrupt = @import("interrupt.zig");
const ext_ui = @import("ext_ui.zig");

const State = p.State;

extern fn luaL_openlibs(L: State) void;

/// The extensions in the binary, loaded first: written against panto.ext only.
const bundled = [_]struct { name: [:0]const u8, source: []const u8 }{
    .{ .name = "@bundled/write.lua", .source = @embedFile("extensions/write.lua") },
    .{ .name = "@bundled/edit.lua", .source = @embedFile("extensions/edit.lua") },
    .{ .name = "@bundled/bash.lua", .source = @embedFile("extensions/bash.lua") },
};

pub const Host = struct {
    gpa: std.mem.Allocator,
    io: std.Io,
    L: State,
    options: Options,
    /// The registrations' strings (a name registered again leaves its old strings here).
    arena: std.heap.ArenaAllocator,
    tools: std.ArrayList(Tool) = .empty,
    /// The same tools as panto parsed them (their capabilities).
    registry: panto.tools.Set,
    /// The specs of the tools the granted capabilities allow, for toolSpecs.
    offered: std.ArrayList([]const u8) = .empty,
    command_list: std.ArrayList(Command) = .empty,
    command_sources: std.ArrayList(?u32) = .empty,
    /// The file being loaded (an index in `sources`): what it registers goes if it fails.
    loading: ?u32 = null,
    sources: std.ArrayList([]const u8) = .empty,
    /// Registry references: command name -> handler; event -> list of {fn, source}.
    commands_ref: c_int = c.LUA_NOREF,
    subscribers_ref: c_int = c.LUA_NOREF,
    /// Where ctx.print of the running command writes.
    command_out: ?*std.Io.Writer = null,
    runner: tool_runner.Runner,
    /// The mode's screen for ext.ui and ctx.send / ctx.set_model (none: print mode, while
    /// the extensions load).
    frontend: ?Frontend = null,
    /// ext.ui.status segments, in the order their keys were first set.
    status_segments: std.ArrayList(ext_ui.Segment) = .empty,
    /// A Gate's reason or rewritten input, until the next gate.
    gate_text: std.ArrayList(u8) = .empty,

    pub const Frontend = ext_ui.Frontend;
    pub const Segment = ext_ui.Segment;

    pub const Options = struct {
        /// Capabilities granted (--allow, config): tools needing others are not offered.
        granted: []const []const u8 = &.{},
        /// Where load failures and handler errors are reported ("file:line: message").
        report: *std.Io.Writer,
    };

    pub const Command = struct { name: []const u8, description: []const u8 };
    pub const Diagnostic = panto.config.Diagnostic;
    pub const PumpError = tool_runner.PumpError;

    const Tool = struct {
        name: []const u8,
        spec: []const u8,
        source: ?u32,
    };

    /// A fresh state with the standard libraries and package.preload['panto'] (the native
    /// luaopen_panto's fresh table plus panto.ext).
    pub fn init(gpa: std.mem.Allocator, io: std.Io, options: Options) !*Host {
        const L = c.luaL_newstate() orelse return error.OutOfMemory;
        errdefer c.lua_close(L);
        const h = try gpa.create(Host);
        h.* = .{ .gpa = gpa, .io = io, .L = L, .options = options, .arena = .init(gpa), .registry = .init(gpa), .runner = undefined };
        c.lua_settop(L, 0);
        c.lua_pushcclosure(L, setUp, 0);
        c.lua_pushlightuserdata(L, h);
        if (c.lua_pcallk(L, 1, 0, 0, 0, null) != c.LUA_OK) {
            gpa.destroy(h);
            return error.LuaSetUpFailed; // out of memory, or a module built for another ABI
        }
        interrupt.install(L, &h.runner.round);
        return h;
    }

    fn setUp(L: State) callconv(.c) c_int {
        const h: *Host = @ptrCast(@alignCast(c.lua_touserdata(L, 1).?));
        luaL_openlibs(L);
        // print writes to the report writer (stderr): stdout is the answer's, and --json's.
        c.lua_pushlightuserdata(L, h);
        c.lua_pushcclosure(L, luaPrint, 1);
        c.lua_setglobal(L, "print");
        _ = c.luaL_getsubtable(L, c.LUA_REGISTRYINDEX, "_PRELOAD");
        c.lua_pushlightuserdata(L, h);
        c.lua_pushcclosure(L, ext.loader, 1);
        c.lua_setfield(L, -2, "panto");
        c.lua_createtable(L, 0, 4);
        h.commands_ref = c.luaL_ref(L, c.LUA_REGISTRYINDEX);
        c.lua_createtable(L, 0, 8);
        h.subscribers_ref = c.luaL_ref(L, c.LUA_REGISTRYINDEX);
        // The native module opened once: panto.sleep and the tool rounds need its registry
        // entries even before an extension requires it.
        _ = c.lua_getglobal(L, "require");
        _ = c.lua_pushstring(L, "panto");
        c.lua_callk(L, 1, 0, 0, null);
        h.runner = .init(h.gpa, L);
        return 0;
    }

    pub fn deinit(h: *Host, gpa: std.mem.Allocator) void {
        interrupt.uninstall();
        h.runner.deinit();
        c.lua_close(h.L);
        h.tools.deinit(gpa);
        h.registry.deinit();
        h.offered.deinit(gpa);
        h.command_list.deinit(gpa);
        h.command_sources.deinit(gpa);
        h.sources.deinit(gpa);
        for (h.status_segments.items) |seg| {
            gpa.free(seg.key);
            gpa.free(seg.text);
        }
        h.status_segments.deinit(gpa);
        h.gate_text.deinit(gpa);
        h.arena.deinit();
        gpa.destroy(h);
    }

    /// Writes "panto: <message>" to the report writer.
    pub fn reportLine(h: *Host, comptime fmt: []const u8, args: anytype) void {
        const w = h.options.report;
        w.print("panto: " ++ fmt ++ "\n", args) catch {};
        w.flush() catch {};
    }

    // ---- loading ----

    /// The extensions bundled in the binary: write, edit, bash.
    pub fn loadBundled(h: *Host) void {
        for (bundled) |b| h.loadSource(b.name, b.source);
    }

    /// One extension file; a failure is reported with file and line, and the command goes on
    /// without what the file registered.
    pub fn loadFile(h: *Host, path: []const u8) void {
        const L = h.L;
        const top = c.lua_gettop(L);
        defer c.lua_settop(L, top);
        const source = h.beginLoad(path) orelse return;
        defer h.loading = null;
        const name = std.fmt.allocPrintSentinel(h.gpa, "{s}", .{path}, 0) catch return h.reportLine("{s}: not enough memory", .{path});
        defer h.gpa.free(name);
        if (c.luaL_loadfilex(L, name.ptr, "t") != c.LUA_OK) {
            h.reportLine("extension {s}", .{p.toSlice(L, -1)});
            return h.forgetSource(source);
        }
        h.runLoaded(source);
    }

    /// Extension source held in memory; `name` is its chunk name ("@file" names a file in
    /// messages). Reported and dropped as loadFile's.
    pub fn loadSource(h: *Host, name: [:0]const u8, text: []const u8) void {
        const L = h.L;
        const top = c.lua_gettop(L);
        defer c.lua_settop(L, top);
        const source = h.beginLoad(name[1..]) orelse return;
        defer h.loading = null;
        if (c.luaL_loadbufferx(L, text.ptr, text.len, name.ptr, "t") != c.LUA_OK) {
            h.reportLine("extension {s}", .{p.toSlice(L, -1)});
            return h.forgetSource(source);
        }
        h.runLoaded(source);
    }

    fn beginLoad(h: *Host, path: []const u8) ?u32 {
        const copy = h.arena.allocator().dupe(u8, path) catch return null;
        h.sources.append(h.gpa, copy) catch return null;
        const source: u32 = @intCast(h.sources.items.len - 1);
        h.loading = source;
        return source;
    }

    fn runLoaded(h: *Host, source: u32) void {
        if (p.call(h.L, 0, 0)) return;
        h.reportLine("extension failed to load: {s}", .{p.toSlice(h.L, -1)});
        h.forgetSource(source);
    }

    /// Every *.lua of a folder, in name order (a missing folder is no error).
    pub fn loadDirectory(h: *Host, dir_path: []const u8) void {
        var dir = std.Io.Dir.cwd().openDir(h.io, dir_path, .{ .iterate = true }) catch |err| switch (err) {
            error.FileNotFound, error.NotDir => return,
            else => return h.reportLine("{s}: cannot read the folder ({s})", .{ dir_path, @errorName(err) }),
        };
        defer dir.close(h.io);
        var names: std.ArrayList([]const u8) = .empty;
        defer {
            for (names.items) |n| h.gpa.free(n);
            names.deinit(h.gpa);
        }
        var it = dir.iterate();
        while (it.next(h.io) catch null) |entry| {
            if (entry.kind == .directory or !std.mem.endsWith(u8, entry.name, ".lua")) continue;
            const copy = h.gpa.dupe(u8, entry.name) catch continue;
            names.append(h.gpa, copy) catch h.gpa.free(copy);
        }
        std.mem.sort([]const u8, names.items, {}, lessThan);
        for (names.items) |n| {
            const path = std.fs.path.join(h.gpa, &.{ dir_path, n }) catch continue;
            defer h.gpa.free(path);
            h.loadFile(path);
        }
    }

    fn lessThan(_: void, a: []const u8, b: []const u8) bool {
        return std.mem.lessThan(u8, a, b);
    }

    /// A file failed: what it registered goes.
    fn forgetSource(h: *Host, source: u32) void {
        const L = h.L;
        var i: usize = h.tools.items.len;
        while (i > 0) {
            i -= 1;
            const t = h.tools.items[i];
            if (t.source != source) continue;
            h.pushHandlers(L);
            clearKey(L, t.name);
            h.dropTool(t.name);
        }
        h.refreshOffered();
        i = h.command_list.items.len;
        while (i > 0) {
            i -= 1;
            if (h.command_sources.items[i] != source) continue;
            h.pushCommandHandlers(L);
            clearKey(L, h.command_list.items[i].name);
            _ = h.command_list.orderedRemove(i);
            _ = h.command_sources.orderedRemove(i);
        }
        h.dropSubscribersOf(source);
    }

    /// Sets t[key] = nil in the table at the top, and pops it.
    fn clearKey(L: State, key: []const u8) void {
        p.pushSlice(L, key);
        c.lua_pushnil(L);
        c.lua_rawset(L, -3);
        p.pop(L, 1);
    }

    // ---- registrations (ext.zig) ----

    /// Checks `spec` as panto checks a tool spec and registers it (replacing a tool of that name).
    pub fn registerTool(h: *Host, name: []const u8, spec: []const u8, diag: *Diagnostic) error{ InvalidConfig, OutOfMemory }!void {
        var scratch: panto.tools.Set = .init(h.gpa);
        defer scratch.deinit();
        scratch.addJson(spec, diag) catch |err| {
            if (err == error.OutOfMemory) diag.fail("not enough memory", .{}) catch {};
            return err;
        };
        const a = h.arena.allocator();
        const tool: Tool = .{ .name = try a.dupe(u8, name), .spec = try a.dupe(u8, spec), .source = h.loading };
        try h.tools.ensureUnusedCapacity(h.gpa, 1);
        h.dropTool(name);
        try h.registry.add(scratch.items()[0], diag);
        h.tools.appendAssumeCapacity(tool);
        h.refreshOffered();
    }

    fn dropTool(h: *Host, name: []const u8) void {
        for (h.tools.items, 0..) |t, i| if (std.mem.eql(u8, t.name, name)) {
            _ = h.tools.orderedRemove(i);
            break;
        };
        h.registry.remove(name);
    }

    /// Whether the granted capabilities allow the tool (the core's rule).
    fn allowed(h: *const Host, t: Tool) bool {
        const parsed = h.registry.find(t.name) orelse return false;
        return parsed.allowedWith(h.options.granted);
    }

    fn refreshOffered(h: *Host) void {
        h.offered.clearRetainingCapacity();
        for (h.tools.items) |t| if (h.allowed(t)) h.offered.append(h.gpa, t.spec) catch {};
    }

    pub fn registerCommand(h: *Host, name: []const u8, description: []const u8) error{OutOfMemory}!void {
        const a = h.arena.allocator();
        const cmd: Command = .{ .name = try a.dupe(u8, name), .description = try a.dupe(u8, description) };
        for (h.command_list.items, 0..) |existing, i| if (std.mem.eql(u8, existing.name, name)) {
            h.command_list.items[i] = cmd;
            h.command_sources.items[i] = h.loading;
            return;
        };
        try h.command_list.ensureUnusedCapacity(h.gpa, 1);
        try h.command_sources.ensureUnusedCapacity(h.gpa, 1);
        h.command_list.appendAssumeCapacity(cmd);
        h.command_sources.appendAssumeCapacity(h.loading);
    }

    pub fn pushHandlers(h: *const Host, L: State) void {
        h.runner.pushHandlers(L);
    }

    pub fn pushCommandHandlers(h: *const Host, L: State) void {
        _ = c.lua_rawgeti(L, c.LUA_REGISTRYINDEX, h.commands_ref);
    }

    /// The function at `func` subscribes to the event named by the string at `event`.
    pub fn subscribe(h: *Host, L: State, event: c_int, func: c_int) void {
        _ = c.lua_rawgeti(L, c.LUA_REGISTRYINDEX, h.subscribers_ref);
        c.lua_pushvalue(L, event);
        if (c.lua_rawget(L, -2) != c.LUA_TTABLE) {
            p.pop(L, 1);
            c.lua_createtable(L, 2, 0);
            c.lua_pushvalue(L, event);
            c.lua_pushvalue(L, -2);
            c.lua_rawset(L, -4);
        }
        c.lua_createtable(L, 2, 0);
        c.lua_pushvalue(L, func);
        c.lua_rawseti(L, -2, 1);
        if (h.loading) |s| {
            c.lua_pushinteger(L, s);
            c.lua_rawseti(L, -2, 2);
        }
        c.lua_rawseti(L, -2, @intCast(c.lua_rawlen(L, -2) + 1));
        p.pop(L, 2);
    }

    /// Some function subscribes to the event `name` by its name (not "*").
    pub fn subscribes(h: *Host, name: []const u8) bool {
        const L = h.L;
        const top = c.lua_gettop(L);
        defer c.lua_settop(L, top);
        _ = c.lua_rawgeti(L, c.LUA_REGISTRYINDEX, h.subscribers_ref);
        p.pushSlice(L, name);
        return c.lua_rawget(L, -2) == c.LUA_TTABLE and c.lua_rawlen(L, -1) > 0;
    }

    /// The function at `func` no longer gets the event named at `event`.
    pub fn unsubscribe(h: *Host, L: State, event: c_int, func: c_int) void {
        _ = c.lua_rawgeti(L, c.LUA_REGISTRYINDEX, h.subscribers_ref);
        c.lua_pushvalue(L, event);
        if (c.lua_rawget(L, -2) == c.LUA_TTABLE) removeEntries(L, c.lua_absindex(L, -1), func, null);
        p.pop(L, 2);
    }

    fn dropSubscribersOf(h: *Host, source: u32) void {
        const L = h.L;
        _ = c.lua_rawgeti(L, c.LUA_REGISTRYINDEX, h.subscribers_ref);
        const t = c.lua_absindex(L, -1);
        c.lua_pushnil(L);
        while (c.lua_next(L, t) != 0) {
            removeEntries(L, c.lua_absindex(L, -1), 0, source);
            p.pop(L, 1);
        }
        p.pop(L, 1);
    }

    /// Removes the entries {fn, source} of the list at `list` whose fn is the value at `func`
    /// (when func is not 0) or whose source is `source`.
    fn removeEntries(L: State, list: c_int, func: c_int, source: ?u32) void {
        const n: c.lua_Integer = @intCast(c.lua_rawlen(L, list));
        var out: c.lua_Integer = 0;
        var i: c.lua_Integer = 1;
        while (i <= n) : (i += 1) {
            _ = c.lua_rawgeti(L, list, i);
            _ = c.lua_rawgeti(L, -1, 1);
            const same_fn = func != 0 and c.lua_rawequal(L, -1, func) != 0;
            p.pop(L, 1);
            _ = c.lua_rawgeti(L, -1, 2);
            const same_source = source != null and c.lua_type(L, -1) == c.LUA_TNUMBER and c.lua_tointegerx(L, -1, null) == source.?;
            p.pop(L, 1);
            if (same_fn or same_source) {
                p.pop(L, 1);
                continue;
            }
            out += 1;
            c.lua_rawseti(L, list, out);
        }
        while (out < n) : (out += 1) {
            c.lua_pushnil(L);
            c.lua_rawseti(L, list, out + 1);
        }
    }

    /// Calls the subscribers of the event named at `event` (then those of "*") with the
    /// value at `data`, the name and a handler's ctx. One that raises is reported; the others still run.
    pub fn dispatch(h: *Host, L: State, event_: c_int, data_: c_int) void {
        h.dispatchGated(L, event_, data_, null);
    }

    /// What the `tool_call` subscribers said of a call (gate): run it as it is, run it with
    /// another input (JSON text, the host's until the next gate), or block it with a reason.
    pub const Gate = union(enum) { pass, rewrite: []const u8, block: []const u8 };

    /// As dispatch; with `gate`, each subscriber's return value may block the call
    /// (`{block = true, reason = "..."}`: the first one to block wins, the rest are not
    /// called) or replace its input (`{input = {...}}`: the later subscribers see it).
    fn dispatchGated(h: *Host, L: State, event_: c_int, data_: c_int, gate: ?*Gate) void {
        const event = c.lua_absindex(L, event_);
        const data = c.lua_absindex(L, data_);
        const top = c.lua_gettop(L);
        defer c.lua_settop(L, top);
        _ = c.lua_rawgeti(L, c.LUA_REGISTRYINDEX, h.subscribers_ref);
        const all = c.lua_absindex(L, -1);
        for ([_]bool{ false, true }) |wildcard| {
            if (wildcard) _ = c.lua_pushstring(L, "*") else c.lua_pushvalue(L, event);
            if (c.lua_rawget(L, all) != c.LUA_TTABLE) {
                p.pop(L, 1);
                continue;
            }
            // A copy: a subscriber may subscribe or unsubscribe while the list runs.
            const list = c.lua_absindex(L, -1);
            const n: c.lua_Integer = @intCast(c.lua_rawlen(L, list));
            c.lua_createtable(L, @intCast(n), 0);
            const copy = c.lua_absindex(L, -1);
            var i: c.lua_Integer = 1;
            while (i <= n) : (i += 1) {
                _ = c.lua_rawgeti(L, list, i);
                _ = c.lua_rawgeti(L, -1, 1);
                c.lua_rawseti(L, copy, i);
                p.pop(L, 1);
            }
            h.pushCtx(L, .handler);
            const ctx = c.lua_absindex(L, -1);
            i = 1;
            while (i <= n) : (i += 1) {
                _ = c.lua_rawgeti(L, copy, i);
                c.lua_pushvalue(L, data);
                c.lua_pushvalue(L, event);
                c.lua_pushvalue(L, ctx);
                if (!p.call(L, 3, @intFromBool(gate != null))) {
                    h.reportLine("ext.on('{s}') handler: {s}", .{ p.toSlice(L, event), p.toSlice(L, -1) });
                    p.pop(L, 1);
                } else if (gate) |g| {
                    const said = h.gateAnswer(L, data, g);
                    p.pop(L, 1);
                    if (said == .block) return;
                }
            }
            p.pop(L, 3);
        }
    }

    /// A gating subscriber's return value (at the top of the stack) applied to `g`; the data
    /// table's `input` becomes a rewritten one.
    fn gateAnswer(h: *Host, L: State, data: c_int, g: *Gate) std.meta.Tag(Gate) {
        if (c.lua_type(L, -1) != c.LUA_TTABLE) return .pass;
        const answer = c.lua_absindex(L, -1);
        defer c.lua_settop(L, answer);
        _ = c.lua_getfield(L, answer, "block");
        if (c.lua_toboolean(L, -1) != 0) {
            _ = c.lua_getfield(L, answer, "reason");
            const reason = if (c.lua_type(L, -1) == c.LUA_TSTRING) p.toSlice(L, -1) else "";
            h.gate_text.clearRetainingCapacity();
            h.gate_text.appendSlice(h.gpa, reason) catch {};
            g.* = .{ .block = h.gate_text.items };
            return .block;
        }
        if (c.lua_getfield(L, answer, "input") != c.LUA_TTABLE) return .pass;
        const input = c.lua_absindex(L, -1);
        c.lua_pushcclosure(L, @import("panto_lua").embed.json.jsonEncode, 0);
        c.lua_pushvalue(L, input);
        if (!p.call(L, 1, 1)) {
            h.reportLine("ext.on('tool_call') handler: its input cannot be JSON: {s}", .{p.toSlice(L, -1)});
            return .pass;
        }
        h.gate_text.clearRetainingCapacity();
        h.gate_text.appendSlice(h.gpa, p.toSlice(L, -1)) catch return .pass;
        g.* = .{ .rewrite = h.gate_text.items };
        c.lua_pushvalue(L, input);
        c.lua_setfield(L, data, "input");
        return .rewrite;
    }

    // ---- what the command asks ----

    /// The tools the extensions registered, as panto tool specs (JSON) for agent.addTool.
    pub fn toolSpecs(h: *const Host) []const []const u8 {
        return h.offered.items;
    }

    /// Every tool the extensions registered, offered or not, with its capabilities.
    pub fn registeredTools(h: *const Host) []const panto.tools.Tool {
        return h.registry.items();
    }

    pub fn hasTool(h: *const Host, name: []const u8) bool {
        for (h.tools.items) |t| if (std.mem.eql(u8, t.name, name)) return h.allowed(t);
        return false;
    }

    /// ext.ui.status(key, text): the segment `key` of the status line says `text`; an empty
    /// text takes it off.
    pub fn setStatus(h: *Host, key: []const u8, text: []const u8) error{OutOfMemory}!void {
        for (h.status_segments.items, 0..) |*seg, i| if (std.mem.eql(u8, seg.key, key)) {
            if (text.len == 0) {
                h.gpa.free(seg.key);
                h.gpa.free(seg.text);
                _ = h.status_segments.orderedRemove(i);
                return;
            }
            const copy = try h.gpa.dupe(u8, text);
            h.gpa.free(seg.text);
            seg.text = copy;
            return;
        };
        if (text.len == 0) return;
        try h.status_segments.ensureUnusedCapacity(h.gpa, 1);
        const k = try h.gpa.dupe(u8, key);
        errdefer h.gpa.free(k);
        h.status_segments.appendAssumeCapacity(.{ .key = k, .text = try h.gpa.dupe(u8, text) });
    }

    pub fn commands(h: *const Host) []const Command {
        return h.command_list.items;
    }

    /// Runs an extension's slash command; its output goes to `out`. false: no such command.
    pub fn runCommand(h: *Host, name: []const u8, args: []const u8, out: *std.Io.Writer) bool {
        const L = h.L;
        const top = c.lua_gettop(L);
        defer c.lua_settop(L, top);
        h.pushCommandHandlers(L);
        p.pushSlice(L, name);
        if (c.lua_rawget(L, -2) == c.LUA_TNIL) return false;
        h.runner.children.clearCancel();
        h.command_out = out;
        defer h.command_out = null;
        p.pushSlice(L, args);
        h.pushCtx(L, .command);
        if (!p.call(L, 2, 1)) {
            // To the command's output, where the prompt loop expects it (on a line of its own).
            out.print("command /{s}: {s}\n", .{ name, p.toSlice(L, -1) }) catch {};
            out.flush() catch {};
            return true;
        }
        if (c.lua_type(L, -1) == c.LUA_TSTRING) {
            const text = p.toSlice(L, -1);
            out.writeAll(text) catch {};
            if (text.len > 0 and text[text.len - 1] != '\n') out.writeAll("\n") catch {};
        }
        out.flush() catch {};
        return true;
    }

    /// Who a ctx is for: a command (its print goes to the command's output; its send waits
    /// for the command's end) or a handler (an `ext.on` subscriber, a tool handler: its print
    /// goes to the report writer; its send is a follow-up of the turn that runs).
    pub const CtxKind = enum(u8) { command, handler };

    /// Pushes a `ctx` table: print, send, set_model, ui (ext.ui's functions).
    pub fn pushCtx(h: *Host, L: State, kind: CtxKind) void {
        c.lua_createtable(L, 0, 4);
        inline for (.{ .{ "print", ctxPrint }, .{ "send", ctxSend }, .{ "set_model", ctxSetModel } }) |f| {
            c.lua_pushlightuserdata(L, h);
            c.lua_pushinteger(L, @intFromEnum(kind));
            c.lua_pushcclosure(L, f[1], 2);
            c.lua_setfield(L, -2, f[0]);
        }
        c.lua_createtable(L, 0, ext_ui.functions.len);
        c.lua_pushlightuserdata(L, h);
        c.luaL_setfuncs(L, &ext_ui.functions, 1);
        c.lua_setfield(L, -2, "ui");
    }

    fn ctxKind(L: State) CtxKind {
        return @enumFromInt(c.lua_tointegerx(L, c.lua_upvalueindex(2), null));
    }

    /// ctx.print(...): the values as Lua's print writes them, to the command's output (a
    /// handler's: to the report writer, as print).
    fn ctxPrint(L: State) callconv(.c) c_int {
        const h: *Host = @ptrCast(@alignCast(c.lua_touserdata(L, c.lua_upvalueindex(1)).?));
        if (ctxKind(L) == .handler) return printTo(L, h.options.report);
        const out = h.command_out orelse return c.luaL_error(L, "ctx.print: the command is over");
        return printTo(L, out);
    }

    /// ctx.send(text): a user message: a command's is sent when the command is over (or
    /// steers the turn that runs); a handler's follows the turn that runs up (sent when it
    /// would end), or, with none running, is sent next. true, or nil and why not.
    fn ctxSend(L: State) callconv(.c) c_int {
        return ctxAction(L, .send);
    }

    /// ctx.set_model("[provider:]name"): the model (and provider) of the next requests, as
    /// /model. true, or nil and why not.
    fn ctxSetModel(L: State) callconv(.c) c_int {
        return ctxAction(L, .set_model);
    }

    fn ctxAction(L: State, comptime which: enum { send, set_model }) c_int {
        const h: *Host = @ptrCast(@alignCast(c.lua_touserdata(L, c.lua_upvalueindex(1)).?));
        const kind = ctxKind(L);
        var len: usize = 0;
        const arg = c.luaL_checklstring(L, 1, &len)[0..len];
        if (kind == .command and h.command_out == null) return c.luaL_error(L, "ctx.%s: the command is over", @tagName(which).ptr);
        const refusal = if (h.frontend) |f| switch (which) {
            .send => f.vtable.send(f.ctx, arg, kind),
            .set_model => f.vtable.set_model(f.ctx, arg),
        } else "no prompt to act on in this mode";
        if (refusal) |why| {
            c.lua_pushnil(L);
            p.pushSlice(L, why);
            return 2;
        }
        c.lua_pushboolean(L, 1);
        return 1;
    }

    /// print(...) of the extensions: to the report writer.
    fn luaPrint(L: State) callconv(.c) c_int {
        const h: *Host = @ptrCast(@alignCast(c.lua_touserdata(L, c.lua_upvalueindex(1)).?));
        return printTo(L, h.options.report);
    }

    fn printTo(L: State, out: *std.Io.Writer) c_int {
        const n = c.lua_gettop(L);
        var i: c_int = 1;
        while (i <= n) : (i += 1) {
            var len: usize = 0;
            const s = c.luaL_tolstring(L, i, &len);
            if (i > 1) out.writeAll("\t") catch {};
            out.writeAll(s[0..len]) catch {};
            p.pop(L, 1);
        }
        out.writeAll("\n") catch {};
        out.flush() catch {};
        return 0;
    }

    /// An agent event for ext.on subscribers: its name and its data as a JSON object.
    pub fn emit(h: *Host, name: []const u8, data_json: []const u8) void {
        _ = h.emitGated(name, data_json, false);
    }

    /// As emit, what the subscribers returned deciding the call's fate (the `tool_call`
    /// event of a call the host is about to run: Gate).
    pub fn emitGated(h: *Host, name: []const u8, data_json: []const u8, gated: bool) Gate {
        const L = h.L;
        // A new turn: a cancel of the one before (it may have come while no tool ran) is spent.
        if (std.mem.eql(u8, name, "turn_start")) h.runner.children.clearCancel();
        const top = c.lua_gettop(L);
        defer c.lua_settop(L, top);
        p.pushSlice(L, name);
        c.lua_pushcclosure(L, @import("panto_lua").embed.json.jsonDecode, 0);
        p.pushSlice(L, data_json);
        if (!p.call(L, 1, 1)) {
            h.reportLine("event {s}: {s}", .{ name, p.toSlice(L, -1) });
            return .pass;
        }
        var gate: Gate = .pass;
        h.dispatchGated(L, top + 1, top + 2, if (gated) &gate else null);
        return gate;
    }

    // ---- tool calls (tool_runner.zig) ----

    /// A host tool call of the round (a TOOL_CALL_START awaiting its result, for a tool of
    /// toolSpecs): its handler starts in a coroutine when the round may run it.
    pub fn startCall(h: *Host, call: panto.event.ToolCallStart) void {
        if (!h.runner.startCall(h.L, call)) {
            h.reportLine("tool {s}: {s}", .{ call.name, p.toSlice(h.L, -1) });
        }
    }

    /// Runs the round's handlers until at least one more result (or progress) is submitted to
    /// `stream` (waiting for sleeping handlers and child processes), or every call has its
    /// result. error.Canceled after cancelAsync; error.NoHandler when no handler of this host
    /// answers what the stream awaits.
    pub fn pump(h: *Host, stream: *panto.Stream) PumpError!void {
        return h.runner.pump(h.L, h, stream);
    }

    /// The round is over without its results (cancel, failure): children killed, coroutines
    /// closed.
    pub fn abandonCalls(h: *Host) void {
        h.runner.abandon(h.L);
    }

    /// From any thread: kills the processes the running handlers started and interrupts the
    /// Lua code that runs (Ctrl-C; interrupt.zig).
    pub fn cancelAsync(h: *Host) void {
        // Lua first: while the host waits for a child (interrupt.pause) nothing is armed, and
        // the killed child's `canceled` outcome is what the code sees. Killing first let the
        // host resume Lua before the request, which then interrupted the code after ext.exec.
        interrupt.request();
        h.runner.children.cancelAsync();
    }

    // ---- ext.exec (ext.zig) ----

    pub fn spawnChild(h: *Host, options: exec.Options, why: *[]const u8) exec.SpawnError!*exec.Child {
        try h.runner.children.list.ensureUnusedCapacity(h.gpa, 1);
        const ch = try exec.spawn(h.gpa, options, @import("panto_lua").embed.tool_runs.now(), why);
        h.runner.children.list.appendAssumeCapacity(ch);
        if (h.runner.children.isCanceled()) h.runner.children.killAll();
        return ch;
    }

    pub fn suspendForChild(h: *Host, L: State, ch: *exec.Child) bool {
        return h.runner.suspendFor(L, ch);
    }

    pub fn waitForChild(h: *Host, L: State, ch: *exec.Child) void {
        const lua_depth = interrupt.pause();
        defer interrupt.unpause(lua_depth);
        h.runner.waitFor(L, ch);
    }

    pub fn releaseChild(h: *Host, L: State, ch: *exec.Child) void {
        h.runner.release(L, ch);
    }
};
