//! An agent: configuration, the conversation it keeps across turns, and its HTTP client.
const std = @import("std");
const Allocator = std.mem.Allocator;
const config_mod = @import("config.zig");
const Config = config_mod.Config;
const Conversation = @import("conversation.zig").Conversation;
const Stream = @import("stream.zig").Stream;

/// panto does its own blocking I/O on the caller's thread: no thread pool, no signal handlers
/// (the host program, be it Python or Go, owns those).
var io_instance: std.Io.Threaded = .init_single_threaded;

pub const RunError = error{ Busy, InvalidArgument, OutOfMemory };

pub const Agent = struct {
    gpa: Allocator,
    /// Holds the configuration's strings.
    config_arena: std.heap.ArenaAllocator,
    config: Config,
    conversation: Conversation,
    http: std.http.Client,
    /// True while a stream of this agent is unfinished: one turn at a time.
    busy: bool = false,
    /// Streams not yet destroyed, finished or not: each still points at this agent.
    live_streams: u32 = 0,
    /// `deinit` was called while streams were alive: the last one to go frees the agent
    /// (sqlite's "zombie" connection), so no order of frees is a use-after-free.
    released: bool = false,

    /// Creates an agent, copying the configuration. A missing API key is read from the
    /// provider's environment variable.
    pub fn init(gpa: Allocator, config: Config) Allocator.Error!*Agent {
        const a = try gpa.create(Agent);
        errdefer gpa.destroy(a);
        a.* = .{
            .gpa = gpa,
            .config_arena = .init(gpa),
            .config = undefined,
            .conversation = .init(gpa),
            .http = .{ .allocator = gpa, .io = io_instance.io() },
        };
        errdefer a.config_arena.deinit();
        const arena = a.config_arena.allocator();
        a.config = .{
            .provider = config.provider,
            .model = try arena.dupe(u8, config.model),
            .base_url = try arena.dupe(u8, config.base_url orelse config.provider.defaultBaseUrl()),
            .api_key = if (config.api_key) |k| try arena.dupe(u8, k) else try envKey(arena, config.provider),
            .system = if (config.system) |s| try arena.dupe(u8, s) else null,
            .max_tokens = config.max_tokens,
        };
        return a;
    }

    /// Frees the agent, or, while some of its streams are alive, lets the last of them free it.
    pub fn deinit(a: *Agent) void {
        if (a.live_streams > 0) {
            a.released = true;
            return;
        }
        a.http.deinit();
        a.conversation.deinit();
        a.config_arena.deinit();
        a.gpa.destroy(a);
    }

    /// Appends `text` as a user message and returns the stream of the turn. Nothing is sent
    /// before the stream's first `next()`.
    pub fn run(a: *Agent, text: []const u8) RunError!*Stream {
        if (a.busy) return error.Busy;
        if (!std.unicode.utf8ValidateSlice(text)) return error.InvalidArgument;
        try a.conversation.appendUserText(text);
        errdefer a.conversation.dropLast();
        const s = try Stream.create(a);
        a.busy = true;
        a.live_streams += 1;
        return s;
    }

    /// Called by a stream as it is destroyed.
    pub fn streamDestroyed(a: *Agent) void {
        a.busy = false;
        a.live_streams -= 1;
        if (a.released and a.live_streams == 0) a.deinit();
    }
};

fn envKey(arena: Allocator, provider: config_mod.Provider) Allocator.Error!?[]const u8 {
    const value = std.c.getenv(provider.apiKeyVariable()) orelse return null;
    return try arena.dupe(u8, std.mem.span(value));
}
