//! The detail of a handle's last failed call (panto_agent_error, panto_tools_error, and a
//! stream call other than next): kept on the handle, never in thread-local state.
const std = @import("std");
const abi = @import("abi.zig");

const gpa = std.heap.c_allocator;

pub const CallError = struct {
    status: abi.Status = .ok,
    message: std.ArrayList(u8) = .empty,

    pub fn deinit(e: *CallError) void {
        e.message.deinit(gpa);
    }

    /// Records a failure; returns its status for the call to return.
    pub fn set(e: *CallError, status: abi.Status, message: []const u8) c_int {
        e.status = status;
        e.message.clearRetainingCapacity();
        e.message.appendSlice(gpa, message) catch {};
        return @intFromEnum(status);
    }

    /// Forgets the failure; returns PANTO_OK.
    pub fn clear(e: *CallError) c_int {
        e.status = .ok;
        e.message.clearRetainingCapacity();
        return @intFromEnum(abi.Status.ok);
    }

    /// Fills the caller's PantoError (if any); returns the status.
    pub fn report(e: *const CallError, out_error: ?*abi.Error) c_int {
        if (out_error) |out| abi.writeSized(abi.Error, out, .{
            .code = @intFromEnum(e.status),
            .message = .from(e.message.items),
        });
        return @intFromEnum(e.status);
    }
};
