//! Interactive mode. Owned by h-tui.
const std = @import("std");
const App = @import("../app.zig").App;

/// The prompt loop until Ctrl-D or /quit: the process's exit code.
pub fn run(app: *App) !u8 {
    _ = app;
    return 0;
}
