//! The interactive mode's unit tests (zig build test): the parts that need no terminal.
test {
    _ = @import("terminal.zig");
    _ = @import("keys.zig");
    _ = @import("width.zig");
    _ = @import("history.zig");
    _ = @import("line_editor.zig");
    _ = @import("summary.zig");
    _ = @import("edit_diff.zig");
    _ = @import("path_complete.zig");
    _ = @import("render.zig");
    _ = @import("status.zig");
    _ = @import("replay.zig");
    _ = @import("turn_input.zig");
    _ = @import("colors.zig");
    _ = @import("session_picker.zig");
}
