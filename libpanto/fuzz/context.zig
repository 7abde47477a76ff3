//! What every fuzz target runs with, set up once per process.
const std = @import("std");

pub const Context = struct {
    /// The allocator the library runs with (guard_allocator.zig, over the host's allocator).
    gpa: std.mem.Allocator,
    /// The native read tool's root (sandbox.zig).
    root: []const u8,
    /// Also check the order of events (invariants.EventRules): off by default, because
    /// hostile streams break it today (libpanto/fuzz/README.md, "Findings").
    strict: bool = false,
};
