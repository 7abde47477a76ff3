//! The `panto` command: a terminal agent on libpanto's Zig API, extensible in Lua.
//! docs/cli.md is its manual. The parts:
//!
//!   main.zig            the entry: options -> settings -> App -> print mode or interactive mode
//!   args.zig            the command line
//!   settings.zig        the config file and the flags -> the agent's JSON config
//!   shell_words.zig     --mcp's COMMAND split into words as a shell splits them
//!   names.zig           tool and capability names checked against those that exist
//!   project_context.zig AGENTS.md files -> the system prompt
//!   system_prompt.zig   the default system prompt (the place, the date, the tools offered)
//!   trust.zig           a project folder's extensions and AGENTS.md: only once trusted
//!   sessions.zig        which session a run keeps (--continue, --session, --no-session)
//!   session_list.zig    `panto sessions`: the sessions kept, to find one
//!   session_tree.zig    /tree: the fork tree a session is in
//!   app.zig             App: the agent, the Lua host, the settings, the turn that runs
//!   turn.zig            one turn driven to its end: events to an Observer, tool calls to the
//!                       Lua host, the adaptive thinking fallback (thinking_fallback.zig)
//!   print_mode.zig      -p: the answer on stdout (json_events.zig for --json), exit codes
//!                       (exit_codes.zig)
//!   rpc_mode.zig        --mode rpc: JSON-lines commands in, the turn's events and answers out
//!   lua/host.zig        the Lua 5.4 state: require('panto') with panto.ext, extensions
//!   tui/interactive.zig interactive mode: the prompt, the rendering, slash commands
const std = @import("std");
const panto = @import("panto");
const App = @import("app.zig").App;
const Host = @import("lua/host.zig").Host;
const args_mod = @import("args.zig");
const settings_mod = @import("settings.zig");
const print_mode = @import("print_mode.zig");
const rpc_mode = @import("rpc_mode.zig");
const exit_codes = @import("exit_codes.zig");
const names = @import("names.zig");
const interactive = @import("tui/interactive.zig");
const trust = @import("trust.zig");
const gate = @import("gate.zig");
const system_prompt = @import("system_prompt.zig");
const session_list = @import("session_list.zig");
const model_list = @import("model_list.zig");
const sessions_mod = @import("sessions.zig");
const session_picker = @import("tui/session_picker.zig");
const colors = @import("tui/colors.zig");

/// The C ABI's options (no thread-local signal stack): the Lua module compiled in shares them.
pub const std_options = @import("panto_lua").std_options;

/// The longest prompt read from stdin.
const max_stdin_prompt = 64 << 20;

/// --version names a Debug build: its allocator reports leaks on exit (tests read this).
const build_note = if (@import("builtin").mode == .Debug) " (Debug)" else "";

pub fn main(init: std.process.Init) !u8 {
    const io = init.io;
    const arena = init.arena.allocator();
    // Streaming writers, never positional ones: a redirected stdout or stderr shares its
    // file offset with the shell (`( echo A; panto -p x ) > f`, `2>&1`).
    var out_buf: [4096]u8 = undefined;
    var out = std.Io.File.stdout().writerStreaming(io, &out_buf);
    var err_buf: [1024]u8 = undefined;
    var err_w = std.Io.File.stderr().writerStreaming(io, &err_buf);
    const stderr = &err_w.interface;
    defer stderr.flush() catch {};

    const argv = try init.minimal.args.toSlice(arena);
    var diag: args_mod.Diagnostic = .{};
    var args = args_mod.parse(arena, argv[1..], &diag) catch |err| switch (err) {
        error.Usage => {
            try stderr.print("panto: {s}\n{s}", .{ diag.message(), args_mod.usage_text });
            return exit_codes.usage;
        },
        error.OutOfMemory => return err,
    };
    if (args.help or args.version) {
        if (args.help) try out.interface.writeAll(args_mod.usage_text) else try out.interface.print("panto {s}{s}\n", .{ panto.version, build_note });
        try out.interface.flush();
        return exit_codes.ok;
    }
    if (args.sessions) |command| return listSessions(init, arena, args, command, &out.interface, stderr);
    if (args.list_models) return listModels(init, arena, args, &out.interface, stderr);
    const stdin_tty = std.Io.File.stdin().isTty(io) catch false;
    // RPC mode asks nothing on the terminal either: it goes as print mode does until its loop.
    const print = args.print or args.prompt != null or !stdin_tty or args.rpc;
    if (print) print_mode.blockSigint();
    if (args.@"resume") {
        if (print) {
            try stderr.writeAll("panto: --resume picks a session on a terminal: stdin is not one (--session ID or -c)\n");
            return exit_codes.usage;
        }
        var code: u8 = exit_codes.ok;
        args.session = try pickSession(init, arena, args, &out.interface, stderr, &code) orelse return code;
        args.@"resume" = false;
    }

    const cwd = try std.process.currentPathAlloc(io, arena);
    const home = init.environ_map.get("HOME");
    const with_extensions = try settings_mod.extensionDirsOn(arena, io, args, .{ .home = home, .xdg_config_home = init.environ_map.get("XDG_CONFIG_HOME"), .cwd = cwd });
    const project = try trust.find(arena, io, cwd, home, with_extensions);
    const trusted = try trustProject(arena, io, project, args, print, try trust.listPath(arena, init.environ_map.get("XDG_STATE_HOME"), home), &out.interface, stderr);
    var problem: []const u8 = "";
    const settings = settings_mod.load(init.gpa, arena, io, args, .{
        .home = home,
        .xdg_config_home = init.environ_map.get("XDG_CONFIG_HOME"),
        .cwd = cwd,
        .untrusted_project = if (trusted) null else project.root,
        .no_color = noColor(init),
    }, stderr, &problem) catch |err| switch (err) {
        error.OutOfMemory => return err,
        else => {
            try stderr.print("panto: {s}\n", .{problem});
            return exit_codes.usage;
        },
    };

    var report_w = std.Io.File.stderr().writerStreaming(io, &.{});
    const host = try Host.init(init.gpa, io, .{ .granted = settings.granted, .report = &report_w.interface });
    defer host.deinit(init.gpa);
    // Print mode's SIGINT is watched from here on: an extension's load that does not end is
    // interrupted, and the run exits as canceled.
    var sigint: print_mode.Sigint = .{ .host = host };
    if (print) sigint.watch();
    host.loadBundled();
    if (settings.extension_dirs) {
        host.loadDirectory(settings.user_extensions);
        if (trusted) host.loadDirectory(try std.fs.path.join(arena, &.{ cwd, ".panto", "extensions" }));
    }
    for (settings.extension_files) |file| host.loadFile(file);
    if (try names.checkSettings(arena, &settings, host.registeredTools())) |problem_line| {
        try stderr.print("panto: {s}\n", .{problem_line});
        return exit_codes.usage;
    }

    var maker: Maker = .{
        .init = init,
        .arena = arena,
        .args = args,
        .cwd = cwd,
        .home = home,
        .untrusted_project = if (trusted) null else project.root,
        .host = host,
        .stderr = stderr,
        // An extension's tool_call gate sees the calls the core runs (read, MCP) before they
        // run: each asks first, and gate.zig answers by the rules as they were and by the gate.
        .gating = host.subscribes("tool_call"),
    };
    const first = maker.agentFor(&settings) catch |err| switch (err) {
        error.OutOfMemory => return exit_codes.internal,
        else => return err,
    } orelse return exit_codes.usage;
    var app: App = .{ .gpa = init.gpa, .io = io, .agent = first, .host = host, .settings = &settings, .maker = maker.interface(), .ungated_rules = if (maker.gating) settings.config.approval_rules else null };
    defer app.agent.deinit(); // the one the run ends with (/resume makes another)
    app.countSpent(); // a resumed session's
    defer app.deinit();

    if (args.rpc) {
        sigint.app.store(&app, .seq_cst); // SIGINT cancels the turn that runs, as `abort` does
        return rpc_mode.run(&app, &out.interface);
    }
    if (!print) return interactive.run(&app) catch |err| {
        try stderr.print("panto: interactive mode failed: {s}\n", .{@errorName(err)});
        return exit_codes.internal;
    };
    // -p with neither a prompt nor a pipe: no terminal read that waits for an unseen Ctrl-D.
    var prompt: print_mode.Prompt = if (args.prompt) |given|
        promptWithPipedInput(arena, io, given, stderr) catch |err| {
            try stderr.print("panto: stdin could not be read: {s}\n", .{@errorName(err)});
            return exit_codes.usage;
        }
    else if (stdin_tty) .{ .text = "" } else piped(readStdin(arena, io) catch |err| {
        try stderr.print("panto: the prompt could not be read from stdin: {s}\n", .{@errorName(err)});
        return exit_codes.usage;
    }, "");
    if (args.prompt) |given| prompt.given_len = given.len; // the text starts with it
    if (prompt.media == null and std.mem.trim(u8, prompt.text, " \t\r\n").len == 0) {
        try stderr.writeAll("panto: no prompt: give one (panto -p PROMPT) or pipe it on stdin\n");
        return exit_codes.usage;
    }
    return print_mode.run(&app, prompt, .{
        .json = args.json,
        .stdout = &out.interface,
        .stderr = stderr,
        // (its notes dim on a terminal, unless NO_COLOR)
        .stderr_tty = (std.Io.File.stderr().isTty(io) catch false) and !noColor(init),
    }, &sigint);
}

/// NO_COLOR set and not empty (no-color.org): no colors (tui/colors.zig).
fn noColor(init: std.process.Init) bool {
    const v = init.environ_map.get("NO_COLOR") orelse return false;
    return v.len > 0;
}

/// What makes the run's agent: at start-up, and again for /resume (App.resumeSession) with
/// the session picked in place of the command line's (--session's rule: flags, then what the
/// session recorded, then the config file). The extensions, the trust answer and the
/// capabilities stay the run's.
const Maker = struct {
    init: std.process.Init,
    arena: std.mem.Allocator,
    args: args_mod.Args,
    cwd: []const u8,
    home: ?[]const u8,
    untrusted_project: ?[]const u8,
    host: *Host,
    stderr: *std.Io.Writer,
    /// Whether the agents' rules start with gate.zig's "every call asks" (decided once, at
    /// start-up: App.ungated_rules holds the rules as they were).
    gating: bool,

    fn interface(m: *Maker) App.Maker {
        return .{ .ctx = m, .make = make };
    }

    /// The agent of the session `id` (an id or a unique prefix, as --session takes): its
    /// settings in the run's arena (a resume's few kilobytes, kept until the run ends).
    fn make(ctx: *anyopaque, id: []const u8, problem: *[]const u8) App.MakeError!App.Made {
        const m: *Maker = @ptrCast(@alignCast(ctx));
        var args = m.args;
        args.session = id;
        args.@"continue" = false;
        args.new_session = null;
        args.no_session = false;
        const settings = try m.arena.create(settings_mod.Settings);
        settings.* = settings_mod.load(m.init.gpa, m.arena, m.init.io, args, .{
            .home = m.home,
            .xdg_config_home = m.init.environ_map.get("XDG_CONFIG_HOME"),
            .cwd = m.cwd,
            .untrusted_project = m.untrusted_project,
            .no_color = noColor(m.init),
        }, m.stderr, problem) catch |err| switch (err) {
            error.OutOfMemory => return error.OutOfMemory,
            else => return error.Refused,
        };
        if (settings.config.session == null) {
            problem.* = "sessions are off (\"session\": false in the config file)";
            return error.Refused;
        }
        var diag: panto.config.Diagnostic = .{};
        const agent = try m.agentWith(settings, &diag);
        return .{ .agent = agent orelse {
            problem.* = try m.arena.dupe(u8, diag.message());
            return error.Refused;
        }, .settings = settings };
    }

    /// The agent of `settings`, said on stderr when refused (null).
    fn agentFor(m: *Maker, settings: *const settings_mod.Settings) !?*panto.Agent {
        var diag: panto.config.Diagnostic = .{};
        const agent = try m.agentWith(settings, &diag) orelse {
            // A refused config, or a session that cannot be opened (locked, corrupt, its
            // folder not writable): the user's to fix.
            try m.stderr.print("panto: {s}\n", .{diag.message()});
            return null;
        };
        return agent;
    }

    /// The default system prompt once the tools are known, the agent, the extensions' tools.
    /// null: refused, `diag` says why.
    fn agentWith(m: *Maker, settings: *const settings_mod.Settings, diag: *panto.config.Diagnostic) error{ OutOfMemory, WriteFailed }!?*panto.Agent {
        var config = settings.config;
        if (!settings.system_given) config.system = try defaultSystem(m.arena, m.init.io, m.cwd, m.host, settings);
        if (m.gating) config.approval_rules = try gate.prepend(m.arena, config.approval_rules);
        const agent = panto.Agent.initWithDiagnostic(m.init.gpa, config, diag) catch |err| {
            if (err == error.OutOfMemory) return error.OutOfMemory;
            if (diag.len == 0) diag.fail("{s}", .{@errorName(err)}) catch {};
            return null;
        };
        errdefer agent.deinit();
        try addHostTools(m.arena, agent, m.host, settings, m.stderr);
        return agent;
    }
};

/// Whether the project folder's extensions and AGENTS.md files load (trust.zig): yes when
/// it brings none, with --trust (remembered), or when it was trusted before. Else print mode
/// goes on without them, saying so on stderr (a script's exit code stays the run's), and
/// interactive mode asks once: trust (remembered) or not now.
/// `panto sessions`: the config file says where sessions are; nothing of the project is
/// loaded (no extension runs, no trust is asked).
fn listSessions(init: std.process.Init, arena: std.mem.Allocator, args: args_mod.Args, command: args_mod.SessionsCommand, out: *std.Io.Writer, stderr: *std.Io.Writer) !u8 {
    const cwd = try std.process.currentPathAlloc(init.io, arena);
    const home = init.environ_map.get("HOME");
    const settings = try userSettings(init, arena, args, cwd, stderr) orelse return exit_codes.usage;
    var diag: panto.config.Diagnostic = .{};
    session_list.run(init.gpa, arena, command, settings.session_place, cwd, home, out, stderr, &diag) catch |err| switch (err) {
        error.OutOfMemory => return err,
        error.WriteFailed => return exit_codes.internal,
        else => {
            try stderr.print("panto: {s}\n", .{diag.message()});
            return exit_codes.usage;
        },
    };
    try out.flush();
    return exit_codes.ok;
}

/// The settings of a command that loads nothing of the project (the session list, the model
/// list, the session picker): the user's config file and the flags, the folder untrusted;
/// null when they are refused (said on stderr).
fn userSettings(init: std.process.Init, arena: std.mem.Allocator, args: args_mod.Args, cwd: []const u8, stderr: *std.Io.Writer) !?settings_mod.Settings {
    var problem: []const u8 = "";
    return settings_mod.load(init.gpa, arena, init.io, args, .{
        .home = init.environ_map.get("HOME"),
        .xdg_config_home = init.environ_map.get("XDG_CONFIG_HOME"),
        .cwd = cwd,
        .untrusted_project = cwd,
        .no_color = noColor(init),
    }, stderr, &problem) catch |err| switch (err) {
        error.OutOfMemory => return err,
        else => {
            try stderr.print("panto: {s}\n", .{problem});
            return null;
        },
    };
}

/// `panto --list-models`: the config file and the flags say which provider, key and address;
/// nothing of the project is loaded and no session file is opened.
fn listModels(init: std.process.Init, arena: std.mem.Allocator, args: args_mod.Args, out: *std.Io.Writer, stderr: *std.Io.Writer) !u8 {
    const cwd = try std.process.currentPathAlloc(init.io, arena);
    const settings = try userSettings(init, arena, args, cwd, stderr) orelse return exit_codes.usage;
    var config = settings.config;
    config.session = null;
    var diag: panto.config.Diagnostic = .{};
    const agent = panto.Agent.initWithDiagnostic(init.gpa, config, &diag) catch |err| {
        try stderr.print("panto: {s}\n", .{if (diag.len > 0) diag.message() else @errorName(err)});
        return if (err == error.OutOfMemory) exit_codes.internal else exit_codes.usage;
    };
    defer agent.deinit();
    return model_list.run(init.gpa, arena, agent, args.json, out, stderr);
}

/// --resume: the id of the session picked from this folder's (tui/session_picker.zig), which
/// then resumes as --session's; null when the user left the picker, or none is kept (said on
/// stderr), `code` then the exit code.
fn pickSession(init: std.process.Init, arena: std.mem.Allocator, args: args_mod.Args, out: *std.Io.Writer, stderr: *std.Io.Writer, code: *u8) !?[]const u8 {
    const io = init.io;
    const cwd = try std.process.currentPathAlloc(io, arena);
    // Only where sessions are kept is needed: nothing of the project loads for it.
    const settings = try userSettings(init, arena, args, cwd, stderr) orelse {
        code.* = exit_codes.usage;
        return null;
    };
    var diag: panto.config.Diagnostic = .{};
    const dir = sessions_mod.sessionDir(arena, settings.session_place, &diag) catch {
        try stderr.print("panto: {s}\n", .{diag.message()});
        code.* = exit_codes.usage;
        return null;
    };
    const listed = panto.session.list(init.gpa, arena, dir, &diag) catch |err| switch (err) {
        error.OutOfMemory => return err,
        else => {
            try stderr.print("panto: {s}\n", .{diag.message()});
            code.* = exit_codes.usage;
            return null;
        },
    };
    var here: std.ArrayList(panto.session.Listed) = .empty;
    for (listed) |l| if (std.mem.eql(u8, l.cwd, cwd)) try here.append(arena, l);
    if (here.items.len == 0) {
        try stderr.print("panto: no session to resume in {s} (sessions: {s})\n", .{ cwd, dir });
        code.* = exit_codes.usage;
        return null;
    }
    var color_buf: [256]u8 = undefined;
    var filter = colors.Filter.init(out, settings.palette, &color_buf);
    return session_picker.pick(arena, here.items, if (settings.palette.plain()) out else &filter.writer) catch |err| {
        try stderr.print("panto: the session picker failed: {s}\n", .{@errorName(err)});
        code.* = exit_codes.internal;
        return null;
    };
}

fn trustProject(arena: std.mem.Allocator, io: std.Io, project: trust.Project, args: args_mod.Args, print: bool, list: ?[:0]const u8, out: *std.Io.Writer, stderr: *std.Io.Writer) !bool {
    if (!args.trust and (project.bringsNothing() or trust.isTrusted(arena, io, list, project.root))) return true;
    if (args.trust or (!print and try askTrust(project, out))) {
        trust.remember(arena, io, list, project.root) catch |err| switch (err) {
            error.OutOfMemory => return err,
            error.TrustWrite => try stderr.print("panto: trusted for this run only: {s} could not be written\n", .{list orelse "the list of trusted folders (no $HOME)"}),
        };
        return true;
    }
    if (print) {
        try stderr.print("panto: {s} is not trusted: left out:\n", .{project.root});
        try trust.describe(stderr, project);
        try stderr.writeAll("panto: to load them, trust the folder: run with --trust once (remembered), or answer the question of an interactive panto there\n");
    }
    return false;
}

/// The question on the terminal before interactive mode starts: true for "trust".
fn askTrust(project: trust.Project, out: *std.Io.Writer) !bool {
    try out.print("This folder is not trusted yet: {s}\nTrusting it loads:\n", .{project.root});
    try trust.describe(out, project);
    try out.writeAll("Trust this folder? [y] trust (remembered) / [N] not now: ");
    try out.flush();
    // The terminal is still line-buffered: a whole line, its excess dropped.
    var line: [64]u8 = undefined;
    var len: usize = 0;
    while (true) {
        var byte: u8 = undefined;
        if (std.c.read(0, @ptrCast(&byte), 1) <= 0 or byte == '\n') break;
        if (len < line.len) {
            line[len] = byte;
            len += 1;
        }
    }
    const answer = std.mem.trim(u8, line[0..len], " \t\r");
    const yes = std.ascii.eqlIgnoreCase(answer, "y") or std.ascii.eqlIgnoreCase(answer, "yes");
    try out.writeAll(if (yes) "Trusted.\n" else "Not trusted: going on without them.\n");
    try out.flush();
    return yes;
}

/// The default system prompt (system_prompt.zig), then the project's AGENTS.md files.
fn defaultSystem(arena: std.mem.Allocator, io: std.Io, cwd: []const u8, host: *Host, settings: *const settings_mod.Settings) ![]const u8 {
    var tools: std.ArrayList([]const u8) = .empty;
    // As the agent offers them: the native read tool first, then the extensions' in order.
    if (settings.config.read_tool != null and granted(settings, "fs.read")) try tools.append(arena, "read");
    for (host.toolSpecs()) |spec| {
        const Named = struct { name: []const u8 };
        const named = std.json.parseFromSliceLeaky(Named, arena, spec, .{ .ignore_unknown_fields = true }) catch continue;
        if (settings.offers(named.name)) try tools.append(arena, named.name);
    }
    const prompt = try system_prompt.build(arena, .{
        .cwd = cwd,
        .os = try system_prompt.osName(arena),
        .now_s = @intCast(@divFloor(std.Io.Clock.real.now(io).nanoseconds, std.time.ns_per_s)),
    }, tools.items);
    if (settings.project_context.len == 0) return prompt;
    return std.fmt.allocPrint(arena, "{s}\n\n{s}", .{ prompt, settings.project_context });
}

fn granted(settings: *const settings_mod.Settings, capability: []const u8) bool {
    for (settings.granted) |g| if (std.mem.eql(u8, g, capability)) return true;
    return false;
}

/// The extensions' tools that are offered (--tools), told to the model through the registry.
fn addHostTools(arena: std.mem.Allocator, agent: *panto.Agent, host: *Host, settings: *const settings_mod.Settings, stderr: *std.Io.Writer) !void {
    for (host.toolSpecs()) |spec| {
        const Named = struct { name: []const u8 };
        const named = std.json.parseFromSliceLeaky(Named, arena, spec, .{ .ignore_unknown_fields = true }) catch continue;
        if (!settings.offers(named.name)) continue;
        var diag: panto.config.Diagnostic = .{};
        agent.addTool(spec, &diag) catch |err| switch (err) {
            error.OutOfMemory => return error.OutOfMemory,
            else => try stderr.print("panto: the tool {s} is left out: {s}\n", .{ named.name, diag.message() }),
        };
    }
}

/// How long a pipe on stdin may stay silent before a prompt given with -p goes without it.
const piped_input_wait_ms = 3000;

/// The prompt given on the command line, followed by what is piped in (`git diff | panto -p
/// "review this"`), after a blank line. Only a pipe or a file counts: a terminal, /dev/null or
/// a socket is left alone. A pipe that stays silent and open (a parent that never closes
/// it) would hang the run: after piped_input_wait_ms without a byte or its end, the prompt
/// goes alone, with a note on stderr.
fn promptWithPipedInput(arena: std.mem.Allocator, io: std.Io, given: []const u8, stderr: *std.Io.Writer) !print_mode.Prompt {
    const stdin = std.Io.File.stdin();
    const kind = (stdin.stat(io) catch return .{ .text = given }).kind; // closed stdin: nothing piped
    switch (kind) {
        .named_pipe => {
            var fds = [_]std.posix.pollfd{.{ .fd = stdin.handle, .events = std.posix.POLL.IN, .revents = 0 }};
            if (try std.posix.poll(&fds, piped_input_wait_ms) == 0) {
                try stderr.print("panto: nothing on stdin after {d} s: the prompt goes without it (</dev/null skips the wait)\n", .{piped_input_wait_ms / 1000});
                return .{ .text = given };
            }
        },
        .file => {},
        else => return .{ .text = given },
    }
    const bytes = try readStdin(arena, io);
    const p = piped(bytes, given);
    if (p.media != null or std.mem.trim(u8, bytes, " \t\r\n").len == 0) return p;
    return .{ .text = try std.mem.concat(arena, u8, &.{ given, "\n\n", bytes }) };
}

/// What was piped: an image or a PDF (by its first bytes: `cat shot.png | panto -p "what is
/// this"`) goes as a media part after the prompt's text, anything else is text. (BMP's
/// magic, "BM", is also how text may start: it is not taken.)
fn piped(bytes: []const u8, given: []const u8) print_mode.Prompt {
    const format = panto.media.detect(bytes) orelse return .{ .text = if (given.len > 0) given else bytes };
    if (format == .bmp) return .{ .text = if (given.len > 0) given else bytes };
    return .{ .text = given, .media = bytes };
}

fn readStdin(arena: std.mem.Allocator, io: std.Io) ![]u8 {
    var buf: [4096]u8 = undefined;
    var r = std.Io.File.stdin().readerStreaming(io, &buf);
    return r.interface.allocRemaining(arena, .limited(max_stdin_prompt));
}

test {
    _ = @import("args.zig");
    _ = @import("at_files.zig");
    _ = @import("exit_codes.zig");
    _ = @import("json_events.zig");
    _ = @import("markdown_export.zig");
    _ = @import("html_export.zig");
    _ = @import("names.zig");
    _ = @import("project_context.zig");
    _ = @import("rpc_mode.zig");
    _ = @import("sessions.zig");
    _ = @import("session_list.zig");
    _ = @import("session_tree.zig");
    _ = @import("shell_words.zig");
    _ = @import("thinking_fallback.zig");
    _ = @import("trust.zig");
    _ = @import("permissions.zig");
    _ = @import("gate.zig");
    _ = @import("system_prompt.zig");
    _ = @import("lua/host_test.zig");
    _ = @import("tui/tests.zig");
}
