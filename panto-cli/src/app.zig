//! App: what a run of the command holds. Owned by h-cli; h-tui and h-ext use what is public.
const std = @import("std");
const panto = @import("panto");
const Host = @import("lua/host.zig").Host;

pub const App = struct {
    gpa: std.mem.Allocator,
    io: std.Io,
    agent: *panto.Agent,
    host: *Host,
    /// The stream of the turn that runs, for cancelTurn from another thread.
    current: std.atomic.Value(?*panto.Stream) = .init(null),

    /// Cancels the turn that runs, if any, from any thread (the interactive mode's Ctrl-C
    /// watcher, print mode's SIGINT): the stream's next() returns error.Canceled and the Lua
    /// host kills the processes its tools started.
    pub fn cancelTurn(app: *App) void {
        if (app.current.load(.acquire)) |s| s.cancel();
        app.host.cancelAsync();
    }
};
