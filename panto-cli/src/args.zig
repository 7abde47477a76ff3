//! The command line: options into `Args`, or a usage error (exit 2) with what was wrong.
const std = @import("std");

pub const usage_text =
    \\usage: panto [options] [-p] [PROMPT...]
    \\       panto sessions [--all] [--json]
    \\
    \\  With no prompt and a terminal on stdin: interactive mode. With -p, a prompt, or stdin
    \\  not a terminal: print mode (the answer streamed to stdout; the prompt is read from
    \\  stdin when none is given, and piped input follows a given one).
    \\
    \\  -p, --print            print mode
    \\      --json             print mode writes the turn's events as JSON lines
    \\      --mode rpc         JSON-lines commands on stdin, events and answers on stdout, for
    \\                         a program that drives panto (docs/cli.md, "RPC mode")
    \\      --provider NAME    anthropic, openai, openai-responses, gemini or bedrock
    \\      --model NAME       the model
    \\      --base-url URL     the provider's endpoint (default: *_BASE_URL, else the public API)
    \\      --thinking LEVEL   off, minimal, low, medium or high
    \\      --system TEXT      the system prompt (AGENTS.md files are added to it)
    \\  -c, --continue         resume the newest session of this directory
    \\      --session ID       resume session ID (or the one whose id starts with ID)
    \\      --resume           pick the session to resume from this directory's (interactive)
    \\      --new-session ID   start a new session under the id ID
    \\      --no-session       keep no session file
    \\      --tools LIST       the tools offered, comma-separated (default: every tool granted)
    \\      --allow CAPS       grant capabilities, comma-separated, over the file's "allow"
    \\                         (fs.read, fs.write, exec are granted by default)
    \\  -e, --extension FILE   load a Lua extension (repeatable)
    \\      --no-extensions    load no extension from ~/.config/panto/extensions or .panto/extensions
    \\      --trust            trust this project folder and remember it: its .panto/extensions
    \\                         and AGENTS.md files load (untrusted, print mode leaves them out)
    \\      --mcp NAME=COMMAND an MCP server (stdio) whose tools are offered as NAME__TOOL; COMMAND
    \\                         is split as a shell splits words (repeatable)
    \\      --mcp NAME=URL     an MCP server over Streamable HTTP (http:// or https://), with a
    \\                         bearer token from $PANTO_MCP_TOKEN_NAME when set
    \\      --yolo             never ask before a tool call (bash, write, edit ask by default;
    \\                         print mode, which cannot ask, denies them without it)
    \\      --list-models      list the provider's models for the account (id, input tokens,
    \\                         prices per million tokens, or "unknown"); --json: as JSON
    \\      --version          print the version
    \\  -h, --help             print this help
    \\
    \\  panto sessions lists the sessions kept for this folder, newest first (id, last change,
    \\  messages, first prompt); --all lists every folder's, --json writes them as the
    \\  library's session list does (one JSON array).
    \\  (`panto -p sessions` or `panto -- sessions` sends the word as a prompt.)
    \\
    \\Settings: ~/.config/panto/config.json ($XDG_CONFIG_HOME honoured). Manual: docs/cli.md.
    \\
;

pub const Args = struct {
    print: bool = false,
    json: bool = false,
    provider: ?[]const u8 = null,
    model: ?[]const u8 = null,
    base_url: ?[]const u8 = null,
    thinking: ?[]const u8 = null,
    system: ?[]const u8 = null,
    @"continue": bool = false,
    session: ?[]const u8 = null,
    new_session: ?[]const u8 = null,
    no_session: bool = false,
    /// Comma-separated lists as given; null when the option was not given.
    tools: ?[]const u8 = null,
    allow: ?[]const u8 = null,
    extensions: []const []const u8 = &.{},
    /// --mcp NAME=COMMAND or NAME=URL, as given, in order.
    mcp: []const []const u8 = &.{},
    no_extensions: bool = false,
    /// Trust the project folder (and remember it): trust.zig.
    trust: bool = false,
    /// Never ask before a call: every call an approval rule or a tool would ask about runs.
    yolo: bool = false,
    version: bool = false,
    help: bool = false,
    /// List the provider's models (model_list.zig), and nothing else.
    list_models: bool = false,
    /// The positional words, joined by spaces; null when there were none.
    prompt: ?[]const u8 = null,
    /// `panto sessions ...`: list the sessions kept, and nothing else.
    sessions: ?SessionsCommand = null,
    /// --mode rpc: driven by a program through JSON lines (rpc_mode.zig).
    rpc: bool = false,
    /// --resume: the session picked from a list (tui/session_picker.zig), then as --session.
    @"resume": bool = false,
};

/// `panto sessions [--all] [--json]`.
pub const SessionsCommand = struct {
    /// Every folder's sessions, not only this one's.
    all: bool = false,
    json: bool = false,
};

pub const Error = error{ Usage, OutOfMemory };

/// Why parsing failed, for "panto: <message>" before the usage.
pub const Diagnostic = struct {
    buffer: [256]u8 = undefined,
    len: usize = 0,

    pub fn message(d: *const Diagnostic) []const u8 {
        return d.buffer[0..d.len];
    }

    fn fail(d: *Diagnostic, comptime fmt: []const u8, args: anytype) error{Usage} {
        d.len = (std.fmt.bufPrint(&d.buffer, fmt, args) catch @as([]u8, &d.buffer)).len;
        return error.Usage;
    }
};

const Value = enum { provider, model, base_url, thinking, system, session, new_session, tools, allow, extension, mcp, mode };

const valued = [_]struct { []const u8, Value }{
    .{ "--provider", .provider }, .{ "--model", .model },       .{ "--base-url", .base_url },
    .{ "--thinking", .thinking }, .{ "--system", .system },     .{ "--session", .session },
    .{ "--tools", .tools },       .{ "--allow", .allow },       .{ "--extension", .extension },
    .{ "-e", .extension },        .{ "--new-session", .new_session },
    .{ "--mcp", .mcp },           .{ "--mode", .mode },
};

const thinking_levels = [_][]const u8{ "off", "minimal", "low", "medium", "high" };

/// Parses the arguments after the program name. Strings borrow from `argv` or live in `arena`.
pub fn parse(arena: std.mem.Allocator, argv: []const []const u8, diag: *Diagnostic) Error!Args {
    // A command word only as the very first argument: a prompt that starts with it goes
    // after -p or --.
    if (argv.len > 0 and eql(argv[0], "sessions")) return .{ .sessions = try parseSessions(argv[1..], diag) };
    var a: Args = .{};
    var extensions: std.ArrayList([]const u8) = .empty;
    var mcp: std.ArrayList([]const u8) = .empty;
    var words: std.ArrayList([]const u8) = .empty;
    var i: usize = 0;
    var only_words = false;
    while (i < argv.len) : (i += 1) {
        const arg = argv[i];
        if (only_words or arg.len < 2 or arg[0] != '-') {
            try words.append(arena, arg);
            continue;
        }
        if (std.mem.eql(u8, arg, "--")) {
            only_words = true;
            continue;
        }
        // --name=value is --name value.
        var flag = arg;
        var inline_value: ?[]const u8 = null;
        if (std.mem.startsWith(u8, arg, "--")) if (std.mem.indexOfScalar(u8, arg, '=')) |eq| {
            flag = arg[0..eq];
            inline_value = arg[eq + 1 ..];
        };
        if (valueOption(flag)) |which| {
            const v = inline_value orelse blk: {
                i += 1;
                if (i >= argv.len) return diag.fail("{s} needs a value", .{flag});
                // `--model -p hi`: the value forgotten, the next option taken for it. A value
                // that starts with "-" goes with "=" (--system=-x), except a --system text
                // that is not one of panto's options.
                if (looksLikeOption(argv[i]) and (which != .system or isOption(argv[i])))
                    return diag.fail("{s} needs a value, not the option {s} (write {s}={s} for a value that starts with \"-\")", .{ flag, argv[i], flag, argv[i] });
                break :blk argv[i];
            };
            if (which == .mcp) {
                const eq = std.mem.indexOfScalar(u8, v, '=') orelse 0;
                if (eq == 0 or std.mem.trim(u8, v[eq + 1 ..], " \t").len == 0)
                    return diag.fail("--mcp takes NAME=COMMAND or NAME=URL (a server's name, then the command that starts it or its URL), not \"{s}\"", .{v});
                try mcp.append(arena, v);
                continue;
            }
            try setValue(arena, &a, &extensions, which, flag, v, diag);
            continue;
        }
        if (inline_value != null) return diag.fail("{s} takes no value", .{flag});
        if (eql(flag, "-p") or eql(flag, "--print")) {
            a.print = true;
        } else if (eql(flag, "--json")) {
            a.json = true;
        } else if (eql(flag, "-c") or eql(flag, "--continue")) {
            a.@"continue" = true;
        } else if (eql(flag, "--resume")) {
            a.@"resume" = true;
        } else if (eql(flag, "--no-session")) {
            a.no_session = true;
        } else if (eql(flag, "--no-extensions")) {
            a.no_extensions = true;
        } else if (eql(flag, "--trust")) {
            a.trust = true;
        } else if (eql(flag, "--yolo")) {
            a.yolo = true;
        } else if (eql(flag, "--version")) {
            a.version = true;
        } else if (eql(flag, "--list-models")) {
            a.list_models = true;
        } else if (eql(flag, "-h") or eql(flag, "--help")) {
            a.help = true;
        } else return diag.fail("unknown option {s}", .{flag});
    }
    a.extensions = extensions.items;
    a.mcp = mcp.items;
    if (words.items.len > 0) a.prompt = try std.mem.join(arena, " ", words.items);
    if (a.json) a.print = true;
    const session_choices: u8 = @as(u8, @intFromBool(a.@"continue")) + @intFromBool(a.session != null) + @intFromBool(a.new_session != null) + @intFromBool(a.no_session) + @intFromBool(a.@"resume");
    if (session_choices > 1) return diag.fail("--continue, --resume, --session, --new-session and --no-session exclude each other", .{});
    if (a.@"resume" and (a.print or a.prompt != null or a.rpc)) return diag.fail("--resume picks a session on the terminal: interactive mode only (--session ID or -c in print mode)", .{});
    // The prompts of RPC mode come on stdin, as commands.
    if (a.rpc and (a.print or a.prompt != null)) return diag.fail("--mode rpc takes its prompts as commands on stdin: not with -p, --json or a prompt", .{});
    return a;
}

fn parseSessions(argv: []const []const u8, diag: *Diagnostic) Error!SessionsCommand {
    var c: SessionsCommand = .{};
    for (argv) |arg| {
        if (eql(arg, "--all")) {
            c.all = true;
        } else if (eql(arg, "--json")) {
            c.json = true;
        } else return diag.fail("panto sessions takes --all and --json, not {s}", .{arg});
    }
    return c;
}

const flags = [_][]const u8{ "-p", "--print", "--json", "-c", "--continue", "--resume", "--no-session", "--no-extensions", "--yolo", "--version", "--list-models", "-h", "--help" };

fn looksLikeOption(arg: []const u8) bool {
    return arg.len >= 2 and arg[0] == '-';
}

/// `arg` is one of panto's options (`--name=value` too).
fn isOption(arg: []const u8) bool {
    const name = if (std.mem.startsWith(u8, arg, "--")) arg[0 .. std.mem.indexOfScalar(u8, arg, '=') orelse arg.len] else arg;
    for (flags) |f| if (eql(f, name)) return true;
    return valueOption(name) != null;
}

fn valueOption(flag: []const u8) ?Value {
    for (valued) |v| if (eql(v[0], flag)) return v[1];
    return null;
}

fn setValue(arena: std.mem.Allocator, a: *Args, extensions: *std.ArrayList([]const u8), which: Value, flag: []const u8, v: []const u8, diag: *Diagnostic) Error!void {
    switch (which) {
        .provider => a.provider = v,
        .model => a.model = v,
        .base_url => a.base_url = v,
        .system => a.system = v,
        .session => a.session = v,
        .new_session => a.new_session = v,
        .tools => a.tools = v,
        .allow => a.allow = v,
        .extension => try extensions.append(arena, v),
        .mcp => unreachable, // (parse takes it)
        .mode => {
            if (!eql(v, "rpc")) return diag.fail("{s} must be rpc, not \"{s}\" (without it: interactive or print mode)", .{ flag, v });
            a.rpc = true;
        },
        .thinking => {
            for (thinking_levels) |l| {
                if (eql(l, v)) break;
            } else return diag.fail("{s} must be one of off, minimal, low, medium, high, not \"{s}\"", .{ flag, v });
            a.thinking = v;
        },
    }
    if (v.len == 0 and which != .system) return diag.fail("{s} needs a value", .{flag});
}

fn eql(a: []const u8, b: []const u8) bool {
    return std.mem.eql(u8, a, b);
}

/// The items of a comma-separated list, trimmed, empty ones dropped.
pub fn splitList(arena: std.mem.Allocator, list: []const u8) error{OutOfMemory}![]const []const u8 {
    var out: std.ArrayList([]const u8) = .empty;
    var it = std.mem.splitScalar(u8, list, ',');
    while (it.next()) |item| {
        const t = std.mem.trim(u8, item, " \t");
        if (t.len > 0) try out.append(arena, t);
    }
    return out.items;
}

test "sessions is a command only as the first word" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    var diag: Diagnostic = .{};
    const listed = try parse(arena.allocator(), &.{ "sessions", "--all" }, &diag);
    try std.testing.expect(listed.sessions.?.all and !listed.sessions.?.json and listed.prompt == null);
    const asked = try parse(arena.allocator(), &.{ "-p", "sessions" }, &diag);
    try std.testing.expect(asked.sessions == null);
    try std.testing.expectEqualStrings("sessions", asked.prompt.?);
    try std.testing.expect((try parse(arena.allocator(), &.{ "--", "sessions" }, &diag)).sessions == null);
    try std.testing.expectError(error.Usage, parse(arena.allocator(), &.{ "sessions", "-p" }, &diag));
    try std.testing.expectEqualStrings("panto sessions takes --all and --json, not -p", diag.message());
}

test "options, values, positional words" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    var diag: Diagnostic = .{};
    const a = try parse(arena.allocator(), &.{ "-p", "--model=m", "--thinking", "high", "-e", "x.lua", "-e", "y.lua", "hello", "--", "-world" }, &diag);
    try std.testing.expect(a.print);
    try std.testing.expectEqualStrings("m", a.model.?);
    try std.testing.expectEqualStrings("high", a.thinking.?);
    try std.testing.expectEqual(@as(usize, 2), a.extensions.len);
    try std.testing.expectEqualStrings("hello -world", a.prompt.?);
}

test "usage errors name what was wrong" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    var diag: Diagnostic = .{};
    try std.testing.expectError(error.Usage, parse(arena.allocator(), &.{"--bogus"}, &diag));
    try std.testing.expectEqualStrings("unknown option --bogus", diag.message());
    try std.testing.expectError(error.Usage, parse(arena.allocator(), &.{"--model"}, &diag));
    try std.testing.expectEqualStrings("--model needs a value", diag.message());
    try std.testing.expectError(error.Usage, parse(arena.allocator(), &.{ "--thinking", "max" }, &diag));
    try std.testing.expectError(error.Usage, parse(arena.allocator(), &.{ "-c", "--session", "x" }, &diag));
    try std.testing.expectError(error.Usage, parse(arena.allocator(), &.{"--json=1"}, &diag));
    try std.testing.expectError(error.Usage, parse(arena.allocator(), &.{ "--model", "-p", "hi" }, &diag));
    try std.testing.expectEqualStrings("--model needs a value, not the option -p (write --model=-p for a value that starts with \"-\")", diag.message());
    try std.testing.expectError(error.Usage, parse(arena.allocator(), &.{ "--system", "--json" }, &diag));
}

test "a value that starts with \"-\": with \"=\", or a --system text that is no option" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    var diag: Diagnostic = .{};
    const a = try parse(arena.allocator(), &.{ "--model=-m", "--system", "- be brief", "-p", "x" }, &diag);
    try std.testing.expectEqualStrings("-m", a.model.?);
    try std.testing.expectEqualStrings("- be brief", a.system.?);
}

test "--mcp NAME=COMMAND, repeatable, with an equals sign after the name" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    var diag: Diagnostic = .{};
    const a = try parse(arena.allocator(), &.{ "--mcp", "fs=npx -y server --root=/tmp", "--mcp=t=python3 s.py" }, &diag);
    try std.testing.expectEqual(@as(usize, 2), a.mcp.len);
    try std.testing.expectEqualStrings("fs=npx -y server --root=/tmp", a.mcp[0]);
    try std.testing.expectEqualStrings("t=python3 s.py", a.mcp[1]);
    try std.testing.expectError(error.Usage, parse(arena.allocator(), &.{ "--mcp", "npx server" }, &diag));
    try std.testing.expectError(error.Usage, parse(arena.allocator(), &.{ "--mcp", "=npx" }, &diag));
    try std.testing.expectError(error.Usage, parse(arena.allocator(), &.{ "--mcp", "fs= " }, &diag));
    try std.testing.expectEqualStrings("--mcp takes NAME=COMMAND or NAME=URL (a server's name, then the command that starts it or its URL), not \"fs= \"", diag.message());
}

test "--mode rpc, alone: its prompts come as commands" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    var diag: Diagnostic = .{};
    try std.testing.expect((try parse(arena.allocator(), &.{ "--mode", "rpc", "--allow", "exec" }, &diag)).rpc);
    try std.testing.expectError(error.Usage, parse(arena.allocator(), &.{ "--mode", "json" }, &diag));
    try std.testing.expectError(error.Usage, parse(arena.allocator(), &.{ "--mode=rpc", "-p", "hi" }, &diag));
    try std.testing.expectEqualStrings("--mode rpc takes its prompts as commands on stdin: not with -p, --json or a prompt", diag.message());
}

test "lists" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    const l = try splitList(arena.allocator(), " fs.write, exec,,");
    try std.testing.expectEqual(@as(usize, 2), l.len);
    try std.testing.expectEqualStrings("exec", l[1]);
}
