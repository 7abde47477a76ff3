//! The detail of a handle's last failed call (panto_agent_error, panto_tools_error, and a
//! stream call other than next): kept on the handle, never in thread-local state.
const std = @import("std");
const abi = @import("abi.zig");
const Detail = @import("panto").errors.Detail;

const gpa = std.heap.c_allocator;

pub const CallError = struct {
    status: abi.Status = .ok,
    message: std.ArrayList(u8) = .empty,
    /// A failed provider request's detail (panto_agent_count_tokens), kept by the handle;
    /// null for any other failure.
    detail: ?*const Detail = null,

    pub fn deinit(e: *CallError) void {
        e.message.deinit(gpa);
    }

    /// Records a failure; returns its status for the call to return.
    pub fn set(e: *CallError, status: abi.Status, message: []const u8) c_int {
        e.status = status;
        e.detail = null;
        e.message.clearRetainingCapacity();
        e.message.appendSlice(gpa, message) catch {};
        return @intFromEnum(status);
    }

    /// Records a failed provider request, whose `detail` (its message, type, HTTP status,
    /// request id, headers) the handle keeps until its next call.
    pub fn setRequest(e: *CallError, status: abi.Status, detail: *const Detail) c_int {
        const rc = e.set(status, detail.message.items);
        e.detail = detail;
        return rc;
    }

    /// Forgets the failure; returns PANTO_OK.
    pub fn clear(e: *CallError) c_int {
        e.status = .ok;
        e.detail = null;
        e.message.clearRetainingCapacity();
        return @intFromEnum(abi.Status.ok);
    }

    /// Fills the caller's PantoError (if any); returns the status.
    pub fn report(e: *const CallError, out_error: ?*abi.Error) c_int {
        if (out_error) |out| abi.writeSized(abi.Error, out, if (e.detail) |d| .{
            .code = @intFromEnum(e.status),
            .http_status = d.http_status,
            .type = .from(d.error_type.items),
            .message = .from(e.message.items),
            .request_id = .from(d.request_id.items),
            .retry_after = d.retry_after orelse -1,
            .headers = .from(d.headersJson()),
        } else .{
            .code = @intFromEnum(e.status),
            .message = .from(e.message.items),
        });
        return @intFromEnum(e.status);
    }
};
