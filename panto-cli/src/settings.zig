//! Settings: ~/.config/panto/config.json ($XDG_CONFIG_HOME honoured) holds defaults, the
//! command line wins over it. The file's agent keys (provider, model, thinking, system, ...:
//! every key of panto's JSON config) and the flags make one JSON config that the core parses
//! (panto.config.parseJson: one checker), so a bad key is the core's diagnostic, prefixed with
//! the file's name. The command's own keys (cli_keys) are taken out first.
const std = @import("std");
const panto = @import("panto");
const Args = @import("args.zig").Args;
const splitList = @import("args.zig").splitList;
const sessions = @import("sessions.zig");
const colors = @import("tui/colors.zig");
const project_context = @import("project_context.zig");
const shell_words = @import("shell_words.zig");
const permissions = @import("permissions.zig");

/// The keys of the file that are the command's, not the agent's.
pub const cli_keys = [_][]const u8{ "allow", "tools", "extensions", "history_size", "session", "theme", "models", "permissions" };

pub const default_provider = "anthropic";
pub const default_history_size: u32 = 1000;
/// Granted unless the file's "allow" says otherwise: the bundled tools (read, write, edit,
/// bash) are offered, and each call of write, edit and bash asks first (their declaration's
/// `approval = "always"`; docs/cli.md, "Approvals"). A capability says what may be offered,
/// an approval whether one call runs.
pub const default_allow = [_][]const u8{ "fs.read", "fs.write", "exec" };

pub fn defaultModel(provider: []const u8) []const u8 {
    if (std.mem.eql(u8, provider, "openai")) return "gpt-4o";
    if (std.mem.eql(u8, provider, "openai-responses")) return "gpt-5";
    if (std.mem.eql(u8, provider, "gemini")) return "gemini-2.5-flash";
    // A global inference profile: on-demand Claude on Bedrock needs one, from any region.
    if (std.mem.eql(u8, provider, "bedrock")) return "global.anthropic.claude-sonnet-4-5-20250929-v1:0";
    return "claude-sonnet-4-5";
}

pub const Settings = struct {
    /// The agent's configuration, as the core parsed it (strings in the settings' arena).
    config: panto.Config,
    /// The JSON text it was parsed from.
    config_json: []const u8,
    /// The capabilities granted (the agent's "capabilities").
    granted: []const []const u8,
    /// The tool names offered to the model (--tools, "tools"); null: every tool.
    offered: ?[]const []const u8,
    /// Who named them, for a message about one: "--tools" or "FILE: tools".
    offered_by: []const u8 = "",
    /// The capabilities the file's "allow" and --allow name, each checked against those
    /// that exist (names.zig) once the extensions are loaded.
    allow_file: []const []const u8 = &.{},
    allow_flag: []const []const u8 = &.{},
    /// The native read tool is on (the file does not say "read_tool": null).
    native_read: bool = true,
    /// --system or the file's "system" gave the system prompt; else the default one
    /// (system_prompt.zig) goes before `project_context` once the tools offered are known.
    system_given: bool = false,
    /// The AGENTS.md files, as one section of the system prompt ("" when none).
    project_context: []const u8 = "",
    /// Load ~/.config/panto/extensions and ./.panto/extensions.
    extension_dirs: bool,
    /// -e files, in order.
    extension_files: []const []const u8,
    /// Lines the interactive history keeps.
    history_size: u32,
    /// The config file (which may not exist) and the user's extension folder.
    config_path: []const u8,
    user_extensions: []const u8,
    /// Where sessions are kept (the file's "session" object).
    session_place: sessions.Place = .{},
    /// The models Ctrl-P cycles through ("NAME" or "PROVIDER:NAME"), the file's "models".
    models: []const []const u8 = &.{},
    /// The screen's colors: NO_COLOR, the file's "theme" (tui/colors.zig).
    palette: colors.Palette = .{},
    /// Neither the file nor the session gave max_tokens: it is the model's most output tokens
    /// (modelMaxTokens), derived again when /model switches.
    max_tokens_from_model: bool = false,

    /// The tool `name` is offered (--tools).
    pub fn offers(s: *const Settings, name: []const u8) bool {
        const list = s.offered orelse return true;
        for (list) |n| if (std.mem.eql(u8, n, name)) return true;
        return false;
    }
};

pub const Error = error{ Usage, NoSessionToContinue, NoSuchSession, AmbiguousSession, SessionWrite, OutOfMemory };

pub const Environment = struct {
    home: ?[]const u8,
    xdg_config_home: ?[]const u8,
    cwd: []const u8,
    /// A project folder not trusted: its AGENTS.md files are left out (trust.zig).
    untrusted_project: ?[]const u8 = null,
    /// NO_COLOR is set (and not empty): no colors on the screen.
    no_color: bool = false,
};

/// Reads the config file and merges the flags into it. On error, `problem.*` says why in a
/// line for "panto: ..." (naming the file when the file is at fault).
pub fn load(gpa: std.mem.Allocator, arena: std.mem.Allocator, io: std.Io, args: Args, env: Environment, warn: *std.Io.Writer, problem: *[]const u8) Error!Settings {
    const config_dir = try configDir(arena, env);
    const config_path = try std.fs.path.join(arena, &.{ config_dir, "config.json" });
    var file = try readFile(arena, io, config_path, problem);

    var s: Settings = .{
        .config = undefined,
        .config_json = "",
        .granted = &default_allow,
        .offered = null,
        .extension_dirs = !args.no_extensions,
        .extension_files = args.extensions,
        .history_size = default_history_size,
        .config_path = config_path,
        .user_extensions = try std.fs.path.join(arena, &.{ config_dir, "extensions" }),
    };
    // An extension asked for by name must be there: a typo is no warning to scroll past.
    for (args.extensions) |path| {
        const st = std.Io.Dir.cwd().statFile(io, path, .{}) catch |err| switch (err) {
            error.FileNotFound => return fail(arena, problem, "-e {s}: no such file", .{path}),
            else => return fail(arena, problem, "-e {s}: cannot be read ({s})", .{ path, @errorName(err) }),
        };
        if (st.kind == .directory) return fail(arena, problem, "-e {s}: is a directory, not a Lua file", .{path});
    }
    var place: sessions.Place = .{};
    var session_on = true;
    // The project's permissions before the user's (permissions.compose), once it is trusted.
    var perm_sources: std.ArrayList(permissions.Source) = .empty;
    if (env.untrusted_project == null) if (try projectPermissions(arena, io, env.cwd, problem)) |source| try perm_sources.append(arena, source);
    if (file.fetchOrderedRemove("permissions")) |kv| try perm_sources.append(arena, .{ .file = config_path, .value = kv.value });

    // The command's keys.
    if (file.fetchOrderedRemove("allow")) |kv| {
        s.allow_file = try strings(arena, kv.value) orelse
            return fail(arena, problem, "{s}: allow must be an array of capability names", .{config_path});
        s.granted = s.allow_file;
    }
    if (file.fetchOrderedRemove("tools")) |kv| {
        s.offered = try strings(arena, kv.value) orelse
            return fail(arena, problem, "{s}: tools must be an array of tool names (the tools offered)", .{config_path});
        s.offered_by = try std.fmt.allocPrint(arena, "{s}: tools", .{config_path});
    }
    if (file.fetchOrderedRemove("extensions")) |kv| {
        if (kv.value != .bool) return fail(arena, problem, "{s}: extensions must be true or false", .{config_path});
        s.extension_dirs = s.extension_dirs and kv.value.bool;
    }
    if (file.fetchOrderedRemove("history_size")) |kv| {
        if (kv.value != .integer or kv.value.integer < 0 or kv.value.integer > 1_000_000)
            return fail(arena, problem, "{s}: history_size must be an integer from 0 to 1000000", .{config_path});
        s.history_size = @intCast(kv.value.integer);
    }
    if (file.fetchOrderedRemove("models")) |kv| {
        s.models = try strings(arena, kv.value) orelse
            return fail(arena, problem, "{s}: models must be an array of model names (\"NAME\" or \"PROVIDER:NAME\"), the ones Ctrl-P cycles through", .{config_path});
    }
    s.palette.strip = env.no_color;
    if (file.fetchOrderedRemove("theme")) |kv| {
        if (kv.value != .object) return fail(arena, problem, "{s}: theme must be an object of role: color (roles: error, accent, muted)", .{config_path});
        var it = kv.value.object.iterator();
        while (it.next()) |e| {
            const role = std.meta.stringToEnum(colors.Role, e.key_ptr.*) orelse
                return fail(arena, problem, "{s}: theme: no role \"{s}\" (roles: error, accent, muted)", .{ config_path, e.key_ptr.* });
            const name = if (e.value_ptr.* == .string) e.value_ptr.string else "";
            s.palette.roles[@intFromEnum(role)] = colors.sgrOf(name) orelse
                return fail(arena, problem, "{s}: theme: {s}: \"{s}\" is not a color (black red green yellow blue magenta cyan white gray, bright-*, dim, bold, default)", .{ config_path, e.key_ptr.*, name });
        }
    }
    if (file.fetchOrderedRemove("session")) |kv| switch (kv.value) {
        .bool => |on| session_on = on,
        .object => |o| {
            var it = o.iterator();
            while (it.next()) |e| {
                const k = e.key_ptr.*;
                const v = e.value_ptr.*;
                if (std.mem.eql(u8, k, "dir") and v == .string and v.string.len > 0) {
                    place.dir = v.string;
                } else if (std.mem.eql(u8, k, "fsync") and v == .bool) {
                    place.fsync = v.bool;
                } else return fail(arena, problem, "{s}: session takes \"dir\" (a directory path) and \"fsync\" (true or false), not \"{s}\" as given", .{ config_path, k });
            }
        },
        else => return fail(arena, problem, "{s}: session must be true, false, or {{\"dir\": ..., \"fsync\": ...}}", .{config_path}),
    };

    // Flags over the file.
    if (args.allow) |list| {
        s.allow_flag = try splitList(arena, list);
        s.granted = try concat(arena, s.granted, s.allow_flag);
    }
    if (args.tools) |list| {
        s.offered = try splitList(arena, list);
        s.offered_by = "--tools";
    }
    if (file.get("read_tool")) |rt| s.native_read = rt != .null;

    s.session_place = place;
    const choice: sessions.Choice = if (args.no_session or !session_on or args.sessions != null)
        .none
    else if (args.@"continue") .newest else if (args.session) |id| .{ .named = id } else if (args.new_session) |id| .{ .create = id } else .new;
    var diag: panto.config.Diagnostic = .{};
    const session = sessions.resolve(gpa, arena, choice, place, env.cwd, &diag) catch |err| {
        problem.* = try arena.dupe(u8, diag.message());
        return err;
    };

    // Flags over the session resumed (what it recorded) over the file.
    var agent = try file.clone(arena);
    const recorded = session.recorded;
    if (recorded.provider) |p| try agent.put(arena, "provider", .{ .string = p });
    if (recorded.model) |m| try agent.put(arena, "model", .{ .string = m });
    if (recorded.thinking) |t| try agent.put(arena, "thinking", .{ .string = t });
    const base_provider = recorded.provider orelse stringOf(file.get("provider")) orelse default_provider;
    if (args.provider) |p| {
        try agent.put(arena, "provider", .{ .string = p });
        // Another provider than the session's or the file's: their model is not for it.
        if (args.model == null and !std.mem.eql(u8, p, base_provider))
            try agent.put(arena, "model", .{ .string = defaultModel(p) });
    }
    try putDefaults(arena, &agent);
    if (args.model) |m| try agent.put(arena, "model", .{ .string = m });
    if (args.base_url) |u| try agent.put(arena, "base_url", .{ .string = u });
    if (args.thinking) |t| try agent.put(arena, "thinking", .{ .string = t });

    var system: ?[]const u8 = args.system orelse stringOf(file.get("system"));
    s.system_given = system != null;
    const global_context = try std.fs.path.join(arena, &.{ config_dir, project_context.file_name });
    const context = try project_context.collect(arena, io, env.cwd, env.home, env.untrusted_project, global_context, warn);
    s.project_context = context;
    if (context.len > 0) system = if (system != null and system.?.len > 0) try std.fmt.allocPrint(arena, "{s}\n\n{s}", .{ system.?, context }) else context;
    if (system) |text| try agent.put(arena, "system", .{ .string = text });

    var caps = std.json.Array.init(arena);
    for (s.granted) |g| try caps.append(.{ .string = g });
    try agent.put(arena, "capabilities", .{ .array = caps });
    // The native read tool reads under the working directory, when offered.
    if (!s.offers("read")) {
        try agent.put(arena, "read_tool", .null);
    } else if (!file.contains("read_tool")) {
        var rt: std.json.ObjectMap = .empty;
        try rt.put(arena, "root", .{ .string = env.cwd });
        // A path outside asks first (the approval rules below), then is read.
        try rt.put(arena, "confined", .{ .bool = false });
        try agent.put(arena, "read_tool", .{ .object = rt });
    }
    const rules = permissions.compose(arena, perm_sources.items, env.cwd, agent.get("approval_rules"), problem) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        error.Invalid => return error.Usage,
    };
    try agent.put(arena, "approval_rules", .{ .array = rules });

    if (session.value) |v| try agent.put(arena, "session", v);
    if (args.yolo) try neverAsk(arena, &agent);
    if (args.mcp.len > 0) try addMcpServers(arena, &agent, args.mcp, problem);

    s.config_json = try std.json.Stringify.valueAlloc(arena, std.json.Value{ .object = agent }, .{});
    s.config = panto.config.parseJson(arena, s.config_json, &diag) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        error.InvalidConfig => {
            // Whose fault: the file's when the file alone is refused too.
            if (try fileRefused(arena, file)) |msg| return fail(arena, problem, "{s}: {s}", .{ config_path, msg });
            return fail(arena, problem, "{s}", .{diag.message()});
        },
    };
    if (!agent.contains("max_tokens")) {
        s.max_tokens_from_model = true;
        s.config.max_tokens = modelMaxTokens(s.config);
    }
    return s;
}

/// The most output tokens of the configured model (the catalog's, model_info over it), or the
/// core's default for a model the catalog does not know: a daily tool's answer (a long edit, a
/// whole file) should not be cut at 4096 tokens.
pub fn modelMaxTokens(config: panto.Config) u32 {
    const model = panto.catalog.resolve(@tagName(config.provider), config.model, config.model_info) orelse return panto.config.default_max_tokens;
    const most = model.max_output orelse return panto.config.default_max_tokens;
    return @intCast(@min(most, std.math.maxInt(u32)));
}

/// --mcp NAME=COMMAND or NAME=URL: a server in the agent's `mcp_servers`, over the file's of
/// the same name. A value starting with http:// or https:// is a Streamable HTTP server's URL,
/// with `Authorization: Bearer $PANTO_MCP_TOKEN_<NAME>` when that variable is set (a token
/// on the command line would show in `ps` and the shell's history); any other value is a
/// command, split as a shell splits words (shell_words.zig). The core checks the name and URL.
fn addMcpServers(arena: std.mem.Allocator, agent: *std.json.ObjectMap, given: []const []const u8, problem: *[]const u8) Error!void {
    var servers: std.json.ObjectMap = if (agent.get("mcp_servers")) |v| if (v == .object) try v.object.clone(arena) else .empty else .empty;
    for (given) |flag| {
        const eq = std.mem.indexOfScalar(u8, flag, '=').?; // (args.zig checked it)
        const name = flag[0..eq];
        const value = std.mem.trim(u8, flag[eq + 1 ..], " \t");
        var server: std.json.ObjectMap = .empty;
        if (std.mem.startsWith(u8, value, "http://") or std.mem.startsWith(u8, value, "https://")) {
            if (std.mem.indexOfAny(u8, value, " \t") != null) return fail(arena, problem, "--mcp {s}: a URL holds no space (headers other than a bearer token go in the config file)", .{flag});
            try server.put(arena, "url", .{ .string = value });
            if (try tokenOf(arena, name)) |token| {
                var headers: std.json.ObjectMap = .empty;
                try headers.put(arena, "Authorization", .{ .string = try std.fmt.allocPrint(arena, "Bearer {s}", .{token}) });
                try server.put(arena, "headers", .{ .object = headers });
            }
            try servers.put(arena, name, .{ .object = server });
            continue;
        }
        const words = shell_words.split(arena, value) catch |err| switch (err) {
            error.OutOfMemory => return error.OutOfMemory,
            error.UnclosedQuote => return fail(arena, problem, "--mcp {s}: a quote is not closed", .{flag}),
            error.TrailingBackslash => return fail(arena, problem, "--mcp {s}: it ends with a backslash", .{flag}),
        };
        if (words.len == 0) return fail(arena, problem, "--mcp {s}: no command", .{flag});
        try server.put(arena, "command", .{ .string = words[0] });
        var server_args = std.json.Array.init(arena);
        for (words[1..]) |w| try server_args.append(.{ .string = w });
        try server.put(arena, "args", .{ .array = server_args });
        try servers.put(arena, name, .{ .object = server });
    }
    try agent.put(arena, "mcp_servers", .{ .object = servers });
}

/// $PANTO_MCP_TOKEN_<NAME> (the name upper-cased, `-` as `_`) when set and not empty.
fn tokenOf(arena: std.mem.Allocator, name: []const u8) error{OutOfMemory}!?[]const u8 {
    const variable = try arena.allocSentinel(u8, "PANTO_MCP_TOKEN_".len + name.len, 0);
    @memcpy(variable[0.."PANTO_MCP_TOKEN_".len], "PANTO_MCP_TOKEN_");
    for (name, variable["PANTO_MCP_TOKEN_".len..]) |ch, *out| out.* = if (ch == '-') '_' else std.ascii.toUpper(ch);
    const value = std.mem.span(std.c.getenv(variable) orelse return null);
    return if (value.len == 0) null else value;
}

/// --yolo: the file's `approval_rules` with every "ask" made "allow" (its "deny" rules still
/// deny), then a last rule allowing every call, over the tools that ask by their declaration
/// (the bundled bash, write and edit). The core decides: nothing is asked, no event comes.
fn neverAsk(arena: std.mem.Allocator, agent: *std.json.ObjectMap) error{OutOfMemory}!void {
    var rules = std.json.Array.init(arena);
    if (agent.get("approval_rules")) |given| if (given == .array) for (given.array.items) |rule| {
        if (rule == .object) if (rule.object.get("decision")) |d| if (d == .string and std.mem.eql(u8, d.string, "ask")) {
            var allowed = try rule.object.clone(arena);
            try allowed.put(arena, "decision", .{ .string = "allow" });
            try rules.append(.{ .object = allowed });
            continue;
        };
        try rules.append(rule);
    };
    var every: std.json.ObjectMap = .empty;
    try every.put(arena, "tool", .{ .string = "*" });
    try every.put(arena, "decision", .{ .string = "allow" });
    try rules.append(.{ .object = every });
    try agent.put(arena, "approval_rules", .{ .array = rules });
}

/// $XDG_CONFIG_HOME/panto (an absolute one), else ~/.config/panto.
/// Whether the extension folders load: not with --no-extensions, nor with the file's
/// `"extensions": false`. Read before `load`, for the trust question (trust.zig), which must
/// not list a project's extensions that would not load anyway. A file that cannot be read says
/// nothing here: `load` reports it.
pub fn extensionDirsOn(arena: std.mem.Allocator, io: std.Io, args: Args, env: Environment) error{OutOfMemory}!bool {
    if (args.no_extensions) return false;
    var problem: []const u8 = "";
    const file = readFile(arena, io, try std.fs.path.join(arena, &.{ try configDir(arena, env), "config.json" }), &problem) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        else => return true,
    };
    const value = file.get("extensions") orelse return true;
    return value != .bool or value.bool;
}

fn configDir(arena: std.mem.Allocator, env: Environment) error{OutOfMemory}![]const u8 {
    if (env.xdg_config_home) |x| if (x.len > 0 and x[0] == '/') return std.fs.path.join(arena, &.{ x, "panto" });
    return std.fs.path.join(arena, &.{ env.home orelse "/", ".config", "panto" });
}

/// The file's JSON object; empty when there is no file.
fn readFile(arena: std.mem.Allocator, io: std.Io, path: []const u8, problem: *[]const u8) Error!std.json.ObjectMap {
    const text = std.Io.Dir.cwd().readFileAlloc(io, path, arena, .limited(16 << 20)) catch |err| switch (err) {
        error.FileNotFound => return .empty,
        error.OutOfMemory => return error.OutOfMemory,
        else => return fail(arena, problem, "{s}: cannot be read ({s})", .{ path, @errorName(err) }),
    };
    var diag: panto.config.Diagnostic = .{};
    const root = panto.config.parseJsonText(arena, text, "the file", &diag) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        error.InvalidConfig => return fail(arena, problem, "{s}: {s}", .{ path, diag.message() }),
    };
    if (root != .object) return fail(arena, problem, "{s}: must hold a JSON object", .{path});
    return root.object;
}

fn putDefaults(arena: std.mem.Allocator, obj: *std.json.ObjectMap) error{OutOfMemory}!void {
    if (!obj.contains("provider")) try obj.put(arena, "provider", .{ .string = default_provider });
    if (!obj.contains("model")) try obj.put(arena, "model", .{ .string = defaultModel(stringOf(obj.get("provider")) orelse default_provider) });
}

/// A trusted project's `.panto/config.json` (in the working directory): its `permissions`,
/// the one key a project's file may hold; null when there is no such file.
fn projectPermissions(arena: std.mem.Allocator, io: std.Io, cwd: []const u8, problem: *[]const u8) Error!?permissions.Source {
    const path = try std.fs.path.join(arena, &.{ cwd, project_file });
    var file = try readFile(arena, io, path, problem);
    const value = file.fetchOrderedRemove("permissions");
    if (file.count() > 0) return fail(arena, problem, "{s}: a project's file holds only \"permissions\", not \"{s}\"", .{ path, file.keys()[0] });
    return .{ .file = path, .value = if (value) |kv| kv.value else .{ .object = .empty } };
}

/// A project's settings, in the working directory (trust.zig asks before it is read).
pub const project_file = ".panto/config.json";

/// The core's complaint about the file's own agent keys (with the defaults), or null.
fn fileRefused(arena: std.mem.Allocator, file: std.json.ObjectMap) error{OutOfMemory}!?[]const u8 {
    var obj = try file.clone(arena);
    try putDefaults(arena, &obj);
    const json = try std.json.Stringify.valueAlloc(arena, std.json.Value{ .object = obj }, .{});
    var diag: panto.config.Diagnostic = .{};
    _ = panto.config.parseJson(arena, json, &diag) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        error.InvalidConfig => return try arena.dupe(u8, diag.message()),
    };
    return null;
}

fn stringOf(v: ?std.json.Value) ?[]const u8 {
    const value = v orelse return null;
    return if (value == .string) value.string else null;
}

/// A JSON array of strings, or null when `v` is not one.
fn strings(arena: std.mem.Allocator, v: std.json.Value) error{OutOfMemory}!?[]const []const u8 {
    if (v != .array) return null;
    const out = try arena.alloc([]const u8, v.array.items.len);
    for (v.array.items, out) |item, *o| {
        if (item != .string) return null;
        o.* = item.string;
    }
    return out;
}

fn concat(arena: std.mem.Allocator, a: []const []const u8, b: []const []const u8) error{OutOfMemory}![]const []const u8 {
    var out: std.ArrayList([]const u8) = .empty;
    try out.appendSlice(arena, a);
    for (b) |item| {
        for (out.items) |have| {
            if (std.mem.eql(u8, have, item)) break;
        } else try out.append(arena, item);
    }
    return out.items;
}

fn fail(arena: std.mem.Allocator, problem: *[]const u8, comptime fmt: []const u8, args: anytype) Error {
    problem.* = try std.fmt.allocPrint(arena, fmt, args);
    return error.Usage;
}
