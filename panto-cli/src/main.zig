//! The `panto` command: a terminal agent on libpanto's Zig API, extensible in Lua.
//! docs/cli.md is its manual. The parts:
//!
//!   main.zig            the entry: options -> settings -> App -> print mode or interactive mode
//!   app.zig             App: the agent, the Lua host, the settings, the turn that runs
//!   turn.zig            one turn driven to its end: events to an Observer, tool calls to the
//!                       Lua host, the adaptive thinking fallback (reopen)
//!   lua/host.zig        the Lua 5.4 state: require('panto') with panto.ext, extensions
//!   tui/interactive.zig interactive mode: the prompt, the rendering, slash commands
//!
//! SKELETON (design d18): each part's owner replaces its stub; the interfaces below are the
//! contract between them (docs: /work/notes/issue18.md).
const std = @import("std");
const panto = @import("panto");
const App = @import("app.zig").App;

/// The C ABI's options (no thread-local signal stack): the Lua module compiled in shares them.
pub const std_options = @import("panto_lua").std_options;

pub fn main(init: std.process.Init) !u8 {
    _ = App;
    _ = @import("turn.zig");
    _ = @import("tui/interactive.zig");
    var buf: [64]u8 = undefined;
    var out = std.Io.File.stdout().writer(init.io, &buf);
    try out.interface.print("panto {s}\n", .{panto.version});
    try out.interface.flush();
    return 0;
}
