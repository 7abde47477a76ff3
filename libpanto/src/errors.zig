//! The failures of a turn, and the detail kept beside them.
const std = @import("std");
const utf8 = @import("utf8.zig");

/// Every way a turn can fail. The C ABI maps each onto a `PANTO_ERR_*` code.
pub const TurnError = error{
    Authentication,
    PermissionDenied,
    NotFound,
    InvalidRequest,
    RateLimit,
    Overloaded,
    Server,
    Timeout,
    Connection,
    Protocol,
    Canceled,
    ToolLoop,
    Capability,
    OutOfMemory,
    /// The agent's session file could not be written (session/): the conversation keeps the
    /// message in memory.
    SessionWrite,
    /// The turn's configuration cannot make a request: a named tool_choice whose tool the
    /// agent may not use, or what the model cannot take by the model catalog (a max_tokens
    /// above its most output tokens, thinking, an image: catalog/abilities.zig) (type
    /// "config_error").
    Config,
};

/// What an HTTP status means, following both providers' documented error codes.
pub fn fromHttpStatus(status: u16) TurnError {
    return switch (status) {
        401 => error.Authentication,
        403 => error.PermissionDenied,
        404 => error.NotFound,
        400, 413, 422 => error.InvalidRequest,
        429 => error.RateLimit,
        529 => error.Overloaded,
        else => error.Server,
    };
}

/// What a provider's error `type` means (Anthropic `overloaded_error`, OpenAI `server_error`, ...).
pub fn fromErrorType(error_type: []const u8) TurnError {
    const table = [_]struct { []const u8, TurnError }{
        .{ "authentication_error", error.Authentication },
        .{ "permission_error", error.PermissionDenied },
        .{ "not_found_error", error.NotFound },
        .{ "invalid_request_error", error.InvalidRequest },
        .{ "request_too_large", error.InvalidRequest },
        .{ "rate_limit_error", error.RateLimit },
        .{ "overloaded_error", error.Overloaded },
    };
    for (table) |entry| if (std.mem.eql(u8, entry[0], error_type)) return entry[1];
    return error.Server;
}

/// The detail of a failure, owned by the stream that failed.
pub const Detail = struct {
    http_status: u16 = 0,
    error_type: std.ArrayList(u8) = .empty,
    message: std.ArrayList(u8) = .empty,
    request_id: std.ArrayList(u8) = .empty,
    /// The seconds the failed response asked to wait (retry-after-ms, retry-after), if it said.
    retry_after: ?f64 = null,
    /// The response's headers of interest (`ofInterest`) as a JSON object, names in lower
    /// case; empty when there was no response (read as "{}").
    headers: std.ArrayList(u8) = .empty,

    pub fn deinit(d: *Detail, gpa: std.mem.Allocator) void {
        d.error_type.deinit(gpa);
        d.message.deinit(gpa);
        d.request_id.deinit(gpa);
        d.headers.deinit(gpa);
    }

    /// Forgets what the last response's head said (a new request is made).
    pub fn clearResponse(d: *Detail, gpa: std.mem.Allocator) void {
        d.setRequestId(gpa, "");
        d.retry_after = null;
        d.headers.clearRetainingCapacity();
    }

    /// The headers as a JSON object.
    pub fn headersJson(d: *const Detail) []const u8 {
        return if (d.headers.items.len == 0) "{}" else d.headers.items;
    }

    /// Whether a response header is one the error reports (see panto.h, PantoError.headers).
    pub fn ofInterest(name: []const u8) bool {
        const exact = [_][]const u8{ "request-id", "x-request-id", "retry-after", "retry-after-ms", "x-should-retry", "x-amzn-requestid", "x-amzn-errortype" };
        for (exact) |e| if (std.ascii.eqlIgnoreCase(name, e)) return true;
        return std.ascii.startsWithIgnoreCase(name, "anthropic-ratelimit-") or std.ascii.startsWithIgnoreCase(name, "x-ratelimit-");
    }

    /// Adds a response header to `headers` (the first of a name wins); on OOM the object is
    /// left without it, still valid JSON.
    pub fn addHeader(d: *Detail, gpa: std.mem.Allocator, name: []const u8, value: []const u8) void {
        var member: std.ArrayList(u8) = .empty;
        defer member.deinit(gpa);
        var lower: [128]u8 = undefined;
        if (name.len > lower.len) return;
        const key = std.ascii.lowerString(&lower, name);
        var quoted_key: [140]u8 = undefined;
        const needle = std.fmt.bufPrint(&quoted_key, "\"{s}\":", .{key}) catch return;
        if (std.mem.indexOf(u8, d.headers.items, needle) != null) return;
        var clean: std.ArrayList(u8) = .empty;
        defer clean.deinit(gpa);
        utf8.appendLossy(&clean, gpa, value) catch return;
        var w: std.Io.Writer.Allocating = .init(gpa);
        defer w.deinit();
        w.writer.writeAll(if (d.headers.items.len == 0) "{" else ",") catch return;
        std.json.Stringify.value(key, .{}, &w.writer) catch return;
        w.writer.writeByte(':') catch return;
        std.json.Stringify.value(clean.items, .{}, &w.writer) catch return;
        w.writer.writeByte('}') catch return;
        if (d.headers.items.len > 0) d.headers.items.len -= 1; // (its closing brace)
        d.headers.appendSlice(gpa, w.written()) catch {
            if (d.headers.items.len > 0) d.headers.appendAssumeCapacity('}');
        };
    }

    /// Records a failure; on OOM the detail is left partly filled, which is still safe to read.
    pub fn set(d: *Detail, gpa: std.mem.Allocator, http_status: u16, error_type: []const u8, message: []const u8) void {
        d.http_status = http_status;
        d.error_type.clearRetainingCapacity();
        d.message.clearRetainingCapacity();
        // Both may come from a server's headers or body: what leaves panto is UTF-8.
        utf8.appendLossy(&d.error_type, gpa, error_type) catch {};
        utf8.appendLossy(&d.message, gpa, message) catch {};
    }

    /// Replaces every occurrence of `secret` in the message (some providers quote the API key
    /// they refused) so that no key ever reaches an error.
    pub fn scrub(d: *Detail, secret: []const u8) void {
        if (secret.len < 4) return;
        const mask = "[redacted]";
        var i: usize = 0;
        while (std.mem.indexOfPos(u8, d.message.items, i, secret)) |at| {
            d.message.replaceRangeAssumeCapacity(at, secret.len, mask[0..@min(mask.len, secret.len)]);
            if (mask.len > secret.len) {
                // A key shorter than the mask: the mask was cut to fit, still hiding the key.
            }
            i = at + @min(mask.len, secret.len);
        }
    }

    pub fn setRequestId(d: *Detail, gpa: std.mem.Allocator, request_id: []const u8) void {
        d.request_id.clearRetainingCapacity();
        utf8.appendLossy(&d.request_id, gpa, request_id) catch {};
    }
};

test "a response's headers of interest make one JSON object, lower-case names, first wins" {
    const gpa = std.testing.allocator;
    var d: Detail = .{};
    defer d.deinit(gpa);
    try std.testing.expectEqualStrings("{}", d.headersJson());
    const heads = [_]struct { []const u8, []const u8 }{
        .{ "Request-Id", "req_1" },          .{ "content-type", "application/json" },
        .{ "anthropic-ratelimit-requests-remaining", "0" }, .{ "retry-after", "7" },
        .{ "request-id", "req_again" },      .{ "X-RateLimit-Reset", "1\xffs \"x\"" },
        .{ "authorization", "Bearer k" },
    };
    for (heads) |h| if (Detail.ofInterest(h[0])) d.addHeader(gpa, h[0], h[1]);
    try std.testing.expectEqualStrings("{\"request-id\":\"req_1\",\"anthropic-ratelimit-requests-remaining\":\"0\"," ++
        "\"retry-after\":\"7\",\"x-ratelimit-reset\":\"1\xef\xbf\xbds \\\"x\\\"\"}", d.headersJson());
    d.clearResponse(gpa);
    try std.testing.expectEqualStrings("{}", d.headersJson());
}

/// A provider's error body, decoded: the same shape for every provider.
pub const ProviderError = struct {
    type: []const u8,
    message: []const u8,
    request_id: ?[]const u8 = null,
    /// The error's kind when the provider's type says more than the HTTP status (Bedrock: a
    /// 403 of bad credentials is authentication); null, the status's.
    kind: ?TurnError = null,
};
