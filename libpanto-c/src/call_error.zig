//! The detail of a handle's last failed call (panto_agent_error, panto_tools_error, and a
//! stream call other than next): kept on the handle, never in thread-local state.
const std = @import("std");
const abi = @import("abi.zig");

const gpa = std.heap.c_allocator;

pub const CallError = struct {
    status: abi.Status = .ok,
    message: std.ArrayList(u8) = .empty,
    /// PANTO_ERR_OUTPUT: the model's answer that is not the JSON asked for.
    output: std.ArrayList(u8) = .empty,

    pub fn deinit(e: *CallError) void {
        e.message.deinit(gpa);
        e.output.deinit(gpa);
    }

    /// Records a failure; returns its status for the call to return.
    pub fn set(e: *CallError, status: abi.Status, message: []const u8) c_int {
        e.status = status;
        e.message.clearRetainingCapacity();
        e.message.appendSlice(gpa, message) catch {};
        e.output.clearRetainingCapacity();
        return @intFromEnum(status);
    }

    /// Records PANTO_ERR_OUTPUT: why, and the answer (copied: the error outlives the call).
    pub fn setOutput(e: *CallError, message: []const u8, output: []const u8) c_int {
        const status = e.set(.output, message);
        e.output.appendSlice(gpa, output) catch {};
        return status;
    }

    /// Forgets the failure; returns PANTO_OK.
    pub fn clear(e: *CallError) c_int {
        e.status = .ok;
        e.message.clearRetainingCapacity();
        e.output.clearRetainingCapacity();
        return @intFromEnum(abi.Status.ok);
    }

    /// Fills the caller's PantoError (if any); returns the status.
    pub fn report(e: *const CallError, out_error: ?*abi.Error) c_int {
        if (out_error) |out| abi.writeSized(abi.Error, out, .{
            .code = @intFromEnum(e.status),
            .message = .from(e.message.items),
            .output = .from(e.output.items),
        });
        return @intFromEnum(e.status);
    }
};
