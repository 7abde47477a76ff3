//! The prompt's slash commands: the built-in ones below, then the extensions' (ext.command).
const std = @import("std");
const panto = @import("panto");
const App = @import("../app.zig").App;
const Renderer = @import("render.zig").Renderer;
const style = @import("render.zig");
const turn = @import("../turn.zig");
const exit_codes = @import("../exit_codes.zig");
const settings_mod = @import("../settings.zig");
const markdown_export = @import("../markdown_export.zig");
const html_export = @import("../html_export.zig");
const session_tree = @import("../session_tree.zig");
const sessions_mod = @import("../sessions.zig");
const session_picker = @import("session_picker.zig");
const replay = @import("replay.zig");
const terminal = @import("terminal.zig");
const status = @import("status.zig");

const Writer = std.Io.Writer;

pub const Builtin = struct { name: []const u8, usage: []const u8, description: []const u8 };

pub const builtins = [_]Builtin{
    .{ .name = "model", .usage = "/model [[PROVIDER:]NAME]", .description = "switch the model (and the provider); alone: pick one from the catalog's" },
    .{ .name = "thinking", .usage = "/thinking [LEVEL|show|hide]", .description = "the thinking level (off minimal low medium high); show/hide its text" },
    .{ .name = "session", .usage = "/session", .description = "the session this conversation is kept in" },
    .{ .name = "new", .usage = "/new", .description = "start a new conversation, in a new session" },
    .{ .name = "name", .usage = "/name [TEXT]", .description = "name this session (panto sessions and --resume show it)" },
    .{ .name = "fork", .usage = "/fork [N]", .description = "go on in a new session holding this one's first N messages (all)" },
    .{ .name = "resume", .usage = "/resume [ID]", .description = "go on in another session of this folder (a picker; or by id or prefix)" },
    .{ .name = "tree", .usage = "/tree", .description = "the fork tree of this session (/fork and /new make its branches): Enter resumes a row" },
    .{ .name = "export", .usage = "/export [FILE]", .description = "write the conversation as Markdown (panto-SESSION.md), or HTML (FILE.html)" },
    .{ .name = "mcp", .usage = "/mcp", .description = "the MCP servers (config mcp_servers, --mcp) and their tools" },
    .{ .name = "compact", .usage = "/compact [INSTRUCTIONS]", .description = "summarize the older messages to free context (INSTRUCTIONS: what to keep)" },
    .{ .name = "help", .usage = "/help", .description = "this list, and the keys" },
    .{ .name = "quit", .usage = "/quit", .description = "exit (Ctrl-D on an empty line too)" },
};

pub const Outcome = enum { done, quit };

pub const Context = struct {
    app: *App,
    renderer: *Renderer,
    out: *Writer,
    /// The prompt's text, for the earlier conversation shown on /resume.
    prompt: []const u8 = "> ",
};

/// The commands that read the keyboard themselves (a picker): no watcher thread may read it
/// beside them.
pub fn readsKeys(line: []const u8) bool {
    if (line.len == 0 or line[0] != '/') return false;
    const name, const args = split(line);
    return eql(name, "tree") or (args.len == 0 and (eql(name, "resume") or eql(name, "model")));
}

/// "/name args" -> name, args (trimmed).
fn split(line: []const u8) struct { []const u8, []const u8 } {
    const body = std.mem.trim(u8, line[1..], " \t\n");
    const space = std.mem.indexOfAny(u8, body, " \t\n") orelse body.len;
    return .{ body[0..space], std.mem.trim(u8, body[space..], " \t\n") };
}

/// Runs `line` ("/name args"). Output goes to ctx.out; errors are shown, never returned.
pub fn run(ctx: Context, line: []const u8) Writer.Error!Outcome {
    std.debug.assert(line.len > 0 and line[0] == '/');
    const name, const args = split(line);
    const out = ctx.out;
    if (eql(name, "quit") or eql(name, "exit")) return .quit;
    if (eql(name, "help")) {
        try help(ctx);
    } else if (eql(name, "model")) {
        try model(ctx, args);
    } else if (eql(name, "thinking")) {
        try thinking(ctx, args);
    } else if (eql(name, "session")) {
        try session(ctx);
    } else if (eql(name, "compact")) {
        try compact(ctx, args);
    } else if (eql(name, "new")) {
        try newSession(ctx);
    } else if (eql(name, "name")) {
        try nameSession(ctx, args);
    } else if (eql(name, "fork")) {
        try fork(ctx, args);
    } else if (eql(name, "resume")) {
        try resumeCmd(ctx, args);
    } else if (eql(name, "tree")) {
        try tree(ctx);
    } else if (eql(name, "export")) {
        try exportMarkdown(ctx, args);
    } else if (eql(name, "mcp")) {
        try mcp(ctx);
    } else if (!ctx.app.host.runCommand(name, args, out)) {
        try out.print("{s}unknown command /{s}{s} (/help lists them)\n", .{ style.red, name, style.reset });
    }
    return .done;
}

/// Names for Tab completion: the built-ins and the extensions' commands.
pub fn names(gpa: std.mem.Allocator, app: *App) std.mem.Allocator.Error![]const []const u8 {
    const ext = app.host.commands();
    const all = try gpa.alloc([]const u8, builtins.len + ext.len);
    for (builtins, 0..) |b, i| all[i] = b.name;
    for (ext, 0..) |c, i| all[builtins.len + i] = c.name;
    return all;
}

fn eql(a: []const u8, b: []const u8) bool {
    return std.mem.eql(u8, a, b);
}

fn help(ctx: Context) Writer.Error!void {
    const out = ctx.out;
    for (builtins) |b| try out.print("  {s}{s: <28}{s} {s}\n", .{ style.bold, b.usage, style.reset, b.description });
    const ext = ctx.app.host.commands();
    if (ext.len > 0) try out.writeAll("extensions:\n");
    for (ext) |c| try out.print("  {s}/{s: <27}{s} {s}\n", .{ style.bold, c.name, style.reset, c.description });
    try out.writeAll(style.dim ++
        "keys: Enter send · Ctrl-C or Esc cancel the turn · Ctrl-C clear the line · Ctrl-D quit · Ctrl-T thinking\n" ++
        "      Ctrl-O tool results whole (the last, and later ones) or folded again\n" ++
        "      ←/→ Home/End Ctrl-A/E move · Ctrl-U/K/W delete · ↑/↓ history · Tab complete · Ctrl-L\n" ++
        "      Alt-Enter (Shift-Enter) a new line · Ctrl-G edit in $EDITOR\n" ++
        "      during a turn: Enter steers it · Alt-Enter queues a follow-up · Alt-Up takes them back\n" ++
        style.reset);
}

/// `/model NAME`, or `/model PROVIDER:NAME` to switch providers too: the core then derives
/// the new provider's key and endpoint from its environment (a --base-url stays). `/model`
/// alone: a picker over the catalog's models of the provider (the current one selected).
fn model(ctx: Context, args: []const u8) Writer.Error!void {
    const agent = ctx.app.agent;
    if (args.len == 0) {
        const picked = try pickModel(ctx) orelse
            return ctx.out.print("{s} ({s})\n", .{ agent.config.model, @tagName(agent.config.provider) });
        return switchTo(ctx, picked);
    }
    return switchTo(ctx, args);
}

fn switchTo(ctx: Context, spec: []const u8) Writer.Error!void {
    const agent = ctx.app.agent;
    var diag: panto.config.Diagnostic = .{};
    ctx.app.switchModelNamed(spec, &diag) catch |err| {
        const why = if (err == error.InvalidConfig) diag.message() else @errorName(err);
        return ctx.out.print("{s}/model: {s}{s}\n", .{ style.red, why, style.reset });
    };
    try ctx.out.print("model: {s} ({s})\n", .{ agent.config.model, @tagName(agent.config.provider) });
}

/// The catalog's models of the provider, a row each (its most input tokens and list prices),
/// to pick one from; null when the user left, or the catalog has none for the provider.
/// The name picked lives in the catalog.
fn pickModel(ctx: Context) Writer.Error!?[]const u8 {
    const agent = ctx.app.agent;
    const family = panto.catalog.familyOf(@tagName(agent.config.provider)) orelse return null;
    const listed = panto.catalog.models(family);
    if (listed.len == 0) return null;
    var arena: std.heap.ArenaAllocator = .init(ctx.app.gpa);
    defer arena.deinit();
    const a = arena.allocator();
    const rows = a.alloc(session_picker.Row, listed.len) catch return null;
    var current: usize = 0;
    for (listed, rows, 0..) |m, *r, i| {
        var text: Writer.Allocating = .init(a);
        modelRow(&text.writer, m) catch return null;
        r.* = .{ .id = m.name, .text = text.written() };
        if (eql(m.name, agent.config.model)) current = i;
    }
    const title = std.fmt.allocPrint(a, "\x1b[1mPick a model\x1b[0m \x1b[2m({d} {s} models in the catalog; type to filter, ↑/↓, Enter switches, Esc leaves)\x1b[0m", .{ rows.len, @tagName(agent.config.provider) }) catch return null;
    return session_picker.choose(a, rows, title, current, ctx.out) catch |err| switch (err) {
        error.WriteFailed => return error.WriteFailed,
        error.OutOfMemory => null,
    };
}

/// "claude-sonnet-4-5  200k in · $3 / $15 per Mtok".
fn modelRow(w: *Writer, m: panto.catalog.Model) Writer.Error!void {
    try w.writeAll(m.name);
    if (m.max_input) |n| try w.print("  {d}k in", .{n / 1000});
    if (m.price.input != null and m.price.output != null) try w.print(" · ${d} / ${d} per Mtok", .{ m.price.input.?, m.price.output.? });
}

fn thinking(ctx: Context, args: []const u8) Writer.Error!void {
    const agent = ctx.app.agent;
    const r = ctx.renderer;
    if (args.len == 0) {
        return ctx.out.print("thinking {s}, its text {s}\n", .{ @tagName(agent.config.thinking), if (r.show_thinking) "shown" else "folded" });
    }
    if (eql(args, "show")) {
        r.show_thinking = true;
        try r.printThinking();
        return;
    }
    if (eql(args, "hide")) {
        r.show_thinking = false;
        return ctx.out.writeAll("thinking folded after each block\n");
    }
    var buf: [64]u8 = undefined;
    const json = std.fmt.bufPrint(&buf, "{{\"thinking\":{f}}}", .{std.json.fmt(args, .{})}) catch
        return ctx.out.print("{s}/thinking: one of off, minimal, low, medium, high, show, hide{s}\n", .{ style.red, style.reset });
    if (try setConfig(ctx, "thinking", json)) try ctx.out.print("thinking: {s}\n", .{@tagName(agent.config.thinking)});
}

/// agent.setConfig(json); a refusal is shown with the core's diagnostic. true: done.
fn setConfig(ctx: Context, command: []const u8, json: []const u8) Writer.Error!bool {
    var diag: panto.config.Diagnostic = .{};
    ctx.app.agent.setConfig(json, &diag) catch |err| {
        const why = if (err == error.InvalidConfig) diag.message() else @errorName(err);
        try ctx.out.print("{s}/{s}: {s}{s}\n", .{ style.red, command, why, style.reset });
        return false;
    };
    return true;
}

fn session(ctx: Context) Writer.Error!void {
    const agent = ctx.app.agent;
    if (agent.sessionInfo()) |info| {
        try ctx.out.print("session {s}{s}\n  {s}\n  {d} messages\n", .{
            info.id, if (info.resumed) " (resumed)" else "", info.path, agent.messageCount(),
        });
    } else try ctx.out.print("no session (--no-session): {d} messages in memory\n", .{agent.messageCount()});
    try ctx.out.writeAll("  spent: ");
    try status.totals(ctx.out, ctx.app.spent);
    if (ctx.app.spent.cost == null) try ctx.out.writeAll(" (cost unknown: a model the catalog does not price)");
    try ctx.out.writeAll("\n");
    try systemPrompt(ctx);
}

/// `/name TEXT`: the core's name entry in the session's file; `/name` alone shows the name.
fn nameSession(ctx: Context, args: []const u8) Writer.Error!void {
    const agent = ctx.app.agent;
    const info = agent.sessionInfo() orelse return ctx.out.print("{s}/name: no session (--no-session): nothing to name{s}\n", .{ style.red, style.reset });
    if (args.len == 0) {
        if (info.name) |n| return ctx.out.print("session {s}: {s}\n", .{ info.id, n });
        return ctx.out.print("session {s} has no name (/name TEXT names it)\n", .{info.id});
    }
    var diag: panto.config.Diagnostic = .{};
    agent.setSessionName(args, &diag) catch |err| {
        const why = if (diag.len > 0) diag.message() else @errorName(err);
        return ctx.out.print("{s}/name: {s}{s}\n", .{ style.red, why, style.reset });
    };
    try ctx.out.print("session {s} named: {s}\n", .{ info.id, args });
}

/// `/export [FILE]`: the conversation as Markdown, to FILE (relative to the working
/// directory) or `panto-SESSION.md` there, as HTML when FILE ends in .html or .htm; an
/// existing file is replaced, as a shell's `>` would.
fn exportMarkdown(ctx: Context, args: []const u8) Writer.Error!void {
    const agent = ctx.app.agent;
    const gpa = ctx.app.gpa;
    const session_id = if (agent.sessionInfo()) |info| info.id else "";
    var name_buf: [256]u8 = undefined;
    const path = if (args.len > 0) args else std.fmt.bufPrint(&name_buf, "panto-{s}.md", .{if (session_id.len > 0) session_id else "conversation"}) catch "panto-conversation.md";
    var doc: Writer.Allocating = .init(gpa);
    defer doc.deinit();
    const messages = agent.conversation.messages.items;
    const header: markdown_export.Header = .{ .session = session_id, .provider = @tagName(agent.config.provider), .model = agent.config.model };
    const html = std.ascii.endsWithIgnoreCase(path, ".html") or std.ascii.endsWithIgnoreCase(path, ".htm");
    (if (html) html_export.write(&doc.writer, header, messages) else markdown_export.write(&doc.writer, header, messages)) catch
        return ctx.out.print("{s}/export: out of memory{s}\n", .{ style.red, style.reset });
    std.Io.Dir.cwd().writeFile(ctx.app.io, .{ .sub_path = path, .data = doc.written() }) catch |err|
        return ctx.out.print("{s}/export: {s} could not be written ({s}){s}\n", .{ style.red, path, @errorName(err), style.reset });
    try ctx.out.print("wrote {s} ({d} message{s})\n", .{ path, messages.len, if (messages.len == 1) "" else "s" });
}

/// `/new`: the conversation starts again, in a session of its own (the core's fork at 0
/// messages: the new file names the old one as its parent, whose file stays as it was).
/// Without a session, the conversation in memory is cleared.
fn newSession(ctx: Context) Writer.Error!void {
    const agent = ctx.app.agent;
    if (agent.sessionInfo() == null) {
        var diag: panto.conversation_json.Diagnostic = .{};
        agent.truncate(0, &diag) catch |err| return ctx.out.print("{s}/new: {s}{s}\n", .{ style.red, @errorName(err), style.reset });
        ctx.app.countSpent();
        return ctx.out.writeAll("new conversation (no session)\n");
    }
    const old = agent.sessionInfo().?.id;
    var old_buf: [128]u8 = undefined;
    const old_id = old_buf[0..old.len];
    @memcpy(old_id, old);
    if (try forkAt(ctx, "new", 0)) try ctx.out.print("new session {s} (the last one, {s}, is kept: panto --session {s})\n", .{ agent.sessionInfo().?.id, old_id, old_id });
}

/// `/fork [N]`: the core's session fork, at N messages (all when not given).
fn fork(ctx: Context, args: []const u8) Writer.Error!void {
    const agent = ctx.app.agent;
    if (agent.sessionInfo() == null) return ctx.out.print("{s}/fork: no session to fork (--no-session){s}\n", .{ style.red, style.reset });
    const count = if (args.len == 0) agent.messageCount() else std.fmt.parseInt(usize, args, 10) catch
        return ctx.out.print("{s}/fork: N is a number of messages, from 0 to {d}{s}\n", .{ style.red, agent.messageCount(), style.reset });
    if (try forkAt(ctx, "fork", count)) try ctx.out.print("forked: session {s}, {d} messages\n", .{ agent.sessionInfo().?.id, agent.messageCount() });
}

/// agent.forkSession(count); a refusal is shown with the core's words. true: done.
fn forkAt(ctx: Context, command: []const u8, count: usize) Writer.Error!bool {
    var diag: panto.config.Diagnostic = .{};
    ctx.app.agent.forkSession(count, null, &diag) catch |err| {
        if (err == error.InvalidArgument) {
            try ctx.out.print("{s}/{s}: {d} is past the conversation's end ({d} messages){s}\n", .{ style.red, command, count, ctx.app.agent.messageCount(), style.reset });
        } else {
            const why = if (diag.message().len > 0) diag.message() else @errorName(err);
            try ctx.out.print("{s}/{s}: {s}{s}\n", .{ style.red, command, why, style.reset });
        }
        return false;
    };
    ctx.app.countSpent(); // the new session's totals: its messages'
    return true;
}

/// `/tree`: the fork tree this session is in (the sessions of its folder of sessions), as a
/// picker: Enter on a row resumes that session; Esc leaves, the tree then written out.
fn tree(ctx: Context) Writer.Error!void {
    const agent = ctx.app.agent;
    const info = agent.sessionInfo() orelse return ctx.out.print("{s}/tree: no session (--no-session){s}\n", .{ style.red, style.reset });
    var arena: std.heap.ArenaAllocator = .init(ctx.app.gpa);
    defer arena.deinit();
    var diag: panto.config.Diagnostic = .{};
    const dir = std.fs.path.dirname(info.path) orelse ".";
    const sessions = panto.session.list(ctx.app.gpa, arena.allocator(), dir, &diag) catch |err|
        return ctx.out.print("{s}/tree: {s}{s}\n", .{ style.red, if (diag.message().len > 0) diag.message() else @errorName(err), style.reset });
    const t = session_tree.rows(arena.allocator(), sessions, info.id) catch
        return ctx.out.print("{s}/tree: out of memory{s}\n", .{ style.red, style.reset });
    const title = std.fmt.allocPrint(arena.allocator(), "\x1b[1mFork tree\x1b[0m \x1b[2m({d} sessions; type to filter, ↑/↓, Enter resumes, Esc leaves)\x1b[0m", .{t.rows.len}) catch
        return ctx.out.print("{s}/tree: out of memory{s}\n", .{ style.red, style.reset });
    const picked = session_picker.choose(arena.allocator(), t.rows, title, t.current, ctx.out) catch |err| switch (err) {
        error.WriteFailed => return error.WriteFailed,
        error.OutOfMemory => return ctx.out.print("{s}/tree: out of memory{s}\n", .{ style.red, style.reset }),
    };
    const id = picked orelse {
        for (t.rows) |r| try ctx.out.print("{s}\n", .{r.text});
        return;
    };
    if (eql(id, info.id)) return ctx.out.print("already in session {s}\n", .{id});
    try resumeId(ctx, "tree", id);
}

/// `/resume [ID]`: another session of this folder, picked from a list (newest first) or named
/// by its id or a prefix of it; the conversation goes on there (App.resumeSession).
fn resumeCmd(ctx: Context, args: []const u8) Writer.Error!void {
    if (args.len > 0) return resumeId(ctx, "resume", args);
    var arena: std.heap.ArenaAllocator = .init(ctx.app.gpa);
    defer arena.deinit();
    const a = arena.allocator();
    var diag: panto.config.Diagnostic = .{};
    const agent = ctx.app.agent;
    const dir = if (agent.sessionInfo()) |info| std.fs.path.dirname(info.path) orelse "." else sessions_mod.sessionDir(a, ctx.app.settings.session_place, &diag) catch
        return ctx.out.print("{s}/resume: {s}{s}\n", .{ style.red, diag.message(), style.reset });
    const listed = panto.session.list(ctx.app.gpa, a, dir, &diag) catch |err|
        return ctx.out.print("{s}/resume: {s}{s}\n", .{ style.red, if (diag.message().len > 0) diag.message() else @errorName(err), style.reset });
    const cwd = std.process.currentPathAlloc(ctx.app.io, a) catch
        return ctx.out.print("{s}/resume: the working directory is unknown{s}\n", .{ style.red, style.reset });
    // This folder's sessions but the current one.
    const current = if (agent.sessionInfo()) |info| info.id else "";
    var here: std.ArrayList(panto.session.Listed) = .empty;
    for (listed) |l| if (std.mem.eql(u8, l.cwd, cwd) and !eql(l.id, current)) here.append(a, l) catch
        return ctx.out.print("{s}/resume: out of memory{s}\n", .{ style.red, style.reset });
    if (here.items.len == 0) return ctx.out.print("no other session to resume in {s}\n", .{cwd});
    const rows = session_picker.rowsOf(a, here.items) catch
        return ctx.out.print("{s}/resume: out of memory{s}\n", .{ style.red, style.reset });
    const title = session_picker.resumeTitle(a, rows.len) catch
        return ctx.out.print("{s}/resume: out of memory{s}\n", .{ style.red, style.reset });
    const picked = session_picker.choose(a, rows, title, 0, ctx.out) catch |err| switch (err) {
        error.WriteFailed => return error.WriteFailed,
        error.OutOfMemory => return ctx.out.print("{s}/resume: out of memory{s}\n", .{ style.red, style.reset }),
    };
    try resumeId(ctx, "resume", picked orelse return);
}

/// The run goes on in session `id`, its earlier conversation shown as at `panto -c`.
fn resumeId(ctx: Context, command: []const u8, id: []const u8) Writer.Error!void {
    var problem: []const u8 = "";
    ctx.app.resumeSession(id, &problem) catch |err| return switch (err) {
        error.AlreadyThere => ctx.out.print("already in session {s}\n", .{id}),
        error.NotHere => ctx.out.print("{s}/{s}: not in this mode{s}\n", .{ style.red, command, style.reset }),
        error.Refused => ctx.out.print("{s}/{s}: {s}{s}\n", .{ style.red, command, problem, style.reset }),
        error.OutOfMemory => ctx.out.print("{s}/{s}: out of memory{s}\n", .{ style.red, command, style.reset }),
        error.WriteFailed => error.WriteFailed,
    };
    ctx.renderer.cols = terminal.size(1).cols;
    try replay.resumed(ctx.renderer, ctx.app.agent, ctx.prompt);
    const agent = ctx.app.agent;
    try ctx.out.print("{s}model {s} ({s}), thinking {s}{s}\n", .{ style.dim, agent.config.model, @tagName(agent.config.provider), @tagName(agent.config.thinking), style.reset });
}

/// `/mcp`: each server, its command or URL, where it stands (Agent.mcpStatus: not started,
/// ready with its name, version and protocol, failed and why, closed) and the tools it offers
/// (the agent's tools of that server, named SERVER__TOOL); a server starts at the first turn.
fn mcp(ctx: Context) Writer.Error!void {
    const agent = ctx.app.agent;
    const out = ctx.out;
    const servers = agent.config.mcp_servers;
    if (servers.len == 0) return out.writeAll("no MCP servers (the config file's \"mcp_servers\", or --mcp NAME=COMMAND or NAME=URL)\n");
    for (servers, 0..) |server, i| {
        const st = agent.mcpStatus(i);
        try out.print("{s}{s}{s} {s}{s}: ", .{ style.bold, server.name, style.reset, style.dim, @tagName(st.transport) });
        try out.writeAll(server.url orelse server.command);
        for (server.args) |arg| try out.print(" {s}", .{arg});
        try out.print("{s}\n", .{style.reset});
        switch (st.state) {
            .not_started => try out.writeAll("  not started yet: it starts at the next turn, then its tools show here\n"),
            .ready => {
                try out.print("  ready: {s}", .{if (st.server_name.len > 0) st.server_name else "(no serverInfo)"});
                if (st.server_version.len > 0) try out.print(" {s}", .{st.server_version});
                try out.print(", protocol {s}, {d} tool{s}\n", .{ st.protocol_version, st.tool_count, if (st.tool_count == 1) "" else "s" });
            },
            .failed => try out.print("  {s}failed: {s}{s} (it starts again at the next turn)\n", .{ style.red, st.error_message, style.reset }),
            .closed => try out.writeAll("  closed: its process exited (it starts again at the next turn)\n"),
        }
        const line = lastLine(st.stderr_tail);
        if (line.len > 0 and std.mem.indexOf(u8, st.error_message, line) == null)
            try out.print("  {s}stderr: {s}{s}\n", .{ style.dim, line, style.reset });
        if (st.state == .not_started) continue;
        for (agent.tools.items()) |t| if (t.mcp_server) |server_index| if (server_index == i) {
            try out.print("  {s}\n", .{t.name});
        };
    }
}

/// The last non-empty line of a server's stderr.
fn lastLine(tail: []const u8) []const u8 {
    const trimmed = std.mem.trimEnd(u8, tail, " \r\n\t");
    const start = if (std.mem.lastIndexOfScalar(u8, trimmed, '\n')) |i| i + 1 else 0;
    return trimmed[start..];
}

/// The system prompt sent, dim and indented, and whose it is.
fn systemPrompt(ctx: Context) Writer.Error!void {
    const out = ctx.out;
    const text = ctx.app.agent.config.system orelse return out.writeAll("no system prompt\n");
    try out.writeAll(if (ctx.app.settings.system_given)
        "system prompt (--system or the config's \"system\", then AGENTS.md files):\n"
    else
        "system prompt (the default, then AGENTS.md files; --system or the config's \"system\" replaces the default):\n");
    try out.writeAll(style.dim);
    var lines = std.mem.splitScalar(u8, text, '\n');
    while (lines.next()) |line| try out.print("  {s}\n", .{line});
    try out.writeAll(style.reset);
}

/// `/compact [INSTRUCTIONS]`: the older messages summarized now; INSTRUCTIONS (what the
/// summary should keep or stress) follow the compaction prompt for this summary alone.
fn compact(ctx: Context, instructions: []const u8) Writer.Error!void {
    ctx.renderer.beginTurn();
    const observer: turn.Observer = .{ .ctx = ctx.renderer, .event = renderEvent, .note = renderNote, .approve = noApproval };
    switch (turn.compact(ctx.app, if (instructions.len > 0) instructions else null, observer)) {
        .nothing => try ctx.out.writeAll("nothing to compact: every message is recent\n"),
        .compacted => {},
        .canceled => try ctx.out.print("{s}(canceled){s}\n", .{ style.dim, style.reset }),
        .failed => |f| try ctx.out.print("{s}/compact: {s}: {s}{s}\n", .{ style.red, exit_codes.name(f.err), f.message, style.reset }),
    }
}

fn renderEvent(ctx: *anyopaque, e: *const panto.Event) void {
    const r: *Renderer = @ptrCast(@alignCast(ctx));
    r.event(e);
}

fn renderNote(ctx: *anyopaque, text: []const u8) void {
    const r: *Renderer = @ptrCast(@alignCast(ctx));
    r.note(text);
}

/// A compaction runs no tool.
fn noApproval(_: *anyopaque, _: *const panto.event.ApprovalCall) turn.Answer {
    return .cancel;
}
