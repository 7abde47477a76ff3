//! The Lua 5.4 state of the command. Owned by h-ext.
const std = @import("std");
const panto = @import("panto");

pub const Host = struct {
    pub const Options = struct {
        /// Capabilities granted (--allow, config): tools needing others are not offered.
        granted: []const []const u8 = &.{},
        /// Where load failures and handler errors are reported ("file:line: message").
        report: *std.Io.Writer,
    };

    pub const Command = struct { name: []const u8, description: []const u8 };

    /// A fresh state with the standard libraries and package.preload['panto'] (the native
    /// luaopen_panto's fresh table plus panto.ext).
    pub fn init(gpa: std.mem.Allocator, io: std.Io, options: Options) !*Host {
        _ = io;
        _ = options;
        const h = try gpa.create(Host);
        return h;
    }
    pub fn deinit(h: *Host, gpa: std.mem.Allocator) void {
        gpa.destroy(h);
    }

    /// The extensions bundled in the binary: write, edit, bash.
    pub fn loadBundled(h: *Host) void {
        _ = h;
    }
    /// One extension file; a failure is reported with file and line, and the command goes on.
    pub fn loadFile(h: *Host, path: []const u8) void {
        _ = h;
        _ = path;
    }
    /// Every *.lua of a folder, in name order (a missing folder is no error).
    pub fn loadDirectory(h: *Host, dir: []const u8) void {
        _ = h;
        _ = dir;
    }

    /// The tools the extensions registered, as panto tool specs (JSON) for agent.addTool.
    pub fn toolSpecs(h: *const Host) []const []const u8 {
        _ = h;
        return &.{};
    }
    pub fn hasTool(h: *const Host, name: []const u8) bool {
        _ = h;
        _ = name;
        return false;
    }
    pub fn commands(h: *const Host) []const Command {
        _ = h;
        return &.{};
    }
    /// Runs an extension's slash command; its output goes to `out`. false: no such command.
    pub fn runCommand(h: *Host, name: []const u8, args: []const u8, out: *std.Io.Writer) bool {
        _ = h;
        _ = name;
        _ = args;
        _ = out;
        return false;
    }

    /// An agent event for ext.on subscribers: its name and its data as a JSON object.
    pub fn emit(h: *Host, name: []const u8, data_json: []const u8) void {
        _ = h;
        _ = name;
        _ = data_json;
    }

    /// A host tool call of the round (a TOOL_CALL_START awaiting its result, for a tool of
    /// toolSpecs): its handler starts in a coroutine when the round may run it.
    pub fn startCall(h: *Host, call: panto.event.ToolCallStart) void {
        _ = h;
        _ = call;
    }
    /// Runs the round's handlers until at least one more result is submitted to `stream`
    /// (waiting for sleeping handlers and child processes), or every call has its result.
    pub fn pump(h: *Host, stream: *panto.Stream) !void {
        _ = h;
        _ = stream;
    }
    /// The round is over without its results (cancel, failure): children killed, coroutines
    /// closed.
    pub fn abandonCalls(h: *Host) void {
        _ = h;
    }
    /// From any thread: kills the processes the running handlers started (Ctrl-C).
    pub fn cancelAsync(h: *Host) void {
        _ = h;
    }
};
