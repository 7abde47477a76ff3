//! JSON-RPC 2.0 as MCP uses it: one message per line. Requests panto sends carry numeric ids;
//! a line read back is classified as a reply (to which id, result or error), a notification,
//! or a request from the server. A line that is none of these is garbage: the caller ends the
//! server, as a peer that breaks the framing cannot be trusted with the next line either.
const std = @import("std");
const Allocator = std.mem.Allocator;
const Value = std.json.Value;

pub const ParseError = error{ Garbage, OutOfMemory };

/// A JSON-RPC error object of a reply.
pub const RpcError = struct {
    code: i64,
    message: []const u8,
};

pub const Reply = struct {
    /// The id, when it is one panto could have sent (a non-negative integer); a reply with
    /// another id answers nothing panto asked.
    id: ?u64,
    outcome: union(enum) { result: Value, err: RpcError },
};

pub const Notification = struct {
    method: []const u8,
    /// `null` when absent.
    params: ?Value,
};

/// A request from the server (ping, sampling, roots, ...). Its id is kept as the server wrote
/// it (number or string), as compact JSON, so the answer echoes it exactly.
pub const Request = struct {
    id_json: []const u8,
    method: []const u8,
    params: ?Value,
};

pub const Message = union(enum) {
    reply: Reply,
    notification: Notification,
    request: Request,
};

/// Classifies one line (without its newline). Strings point into `arena`.
pub fn parse(arena: Allocator, line: []const u8) ParseError!Message {
    const value = std.json.parseFromSliceLeaky(Value, arena, line, .{}) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        else => return error.Garbage,
    };
    // Batches (arrays) were removed from MCP in 2025-06-18: a server sending one is broken.
    if (value != .object) return error.Garbage;
    const obj = value.object;
    const version = obj.get("jsonrpc") orelse return error.Garbage;
    if (version != .string or !std.mem.eql(u8, version.string, "2.0")) return error.Garbage;
    const id = obj.get("id");
    if (obj.get("method")) |method| {
        if (method != .string) return error.Garbage;
        const params = obj.get("params");
        if (id) |i| {
            if (i != .integer and i != .string) return error.Garbage;
            const id_json = std.json.Stringify.valueAlloc(arena, i, .{}) catch return error.OutOfMemory;
            return .{ .request = .{ .id_json = id_json, .method = method.string, .params = params } };
        }
        return .{ .notification = .{ .method = method.string, .params = params } };
    }
    const i = id orelse return error.Garbage;
    const our_id: ?u64 = if (i == .integer and i.integer >= 0) @intCast(i.integer) else null;
    if (obj.get("result")) |result| return .{ .reply = .{ .id = our_id, .outcome = .{ .result = result } } };
    const err = obj.get("error") orelse return error.Garbage;
    if (err != .object) return error.Garbage;
    const code = err.object.get("code") orelse return error.Garbage;
    if (code != .integer) return error.Garbage;
    const message = if (err.object.get("message")) |m| (if (m == .string) m.string else "") else "";
    return .{ .reply = .{ .id = our_id, .outcome = .{ .err = .{ .code = code.integer, .message = message } } } };
}

/// Writes a request as one line, newline included. `params_json` is compact JSON (an
/// object) or null for none.
pub fn writeRequest(w: *std.Io.Writer, id: u64, method: []const u8, params_json: ?[]const u8) std.Io.Writer.Error!void {
    try w.print("{{\"jsonrpc\":\"2.0\",\"id\":{d},\"method\":", .{id});
    try std.json.Stringify.encodeJsonString(method, .{}, w);
    try writeParams(w, params_json);
}

/// Writes a notification as one line, newline included.
pub fn writeNotification(w: *std.Io.Writer, method: []const u8, params_json: ?[]const u8) std.Io.Writer.Error!void {
    try w.writeAll("{\"jsonrpc\":\"2.0\",\"method\":");
    try std.json.Stringify.encodeJsonString(method, .{}, w);
    try writeParams(w, params_json);
}

/// Answers a server's request `id_json` with a result (compact JSON).
pub fn writeResult(w: *std.Io.Writer, id_json: []const u8, result_json: []const u8) std.Io.Writer.Error!void {
    try w.print("{{\"jsonrpc\":\"2.0\",\"id\":{s},\"result\":{s}}}\n", .{ id_json, result_json });
}

/// Answers a server's request `id_json` with an error.
pub fn writeError(w: *std.Io.Writer, id_json: []const u8, code: i64, message: []const u8) std.Io.Writer.Error!void {
    try w.print("{{\"jsonrpc\":\"2.0\",\"id\":{s},\"error\":{{\"code\":{d},\"message\":", .{ id_json, code });
    try std.json.Stringify.encodeJsonString(message, .{}, w);
    try w.writeAll("}}\n");
}

fn writeParams(w: *std.Io.Writer, params_json: ?[]const u8) std.Io.Writer.Error!void {
    if (params_json) |p| {
        try w.writeAll(",\"params\":");
        try w.writeAll(p);
    }
    try w.writeAll("}\n");
}

/// The JSON-RPC error code for a method the client does not offer.
pub const method_not_found = -32601;

test "requests and notifications are one line each" {
    var buf: [256]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buf);
    try writeRequest(&w, 7, "tools/list", "{\"cursor\":\"a\\nb\"}");
    try writeNotification(&w, "notifications/initialized", null);
    try writeResult(&w, "\"s1\"", "{}");
    try writeError(&w, "3", method_not_found, "no \"sampling\"");
    try std.testing.expectEqualStrings(
        \\{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"a\nb"}}
        \\{"jsonrpc":"2.0","method":"notifications/initialized"}
        \\{"jsonrpc":"2.0","id":"s1","result":{}}
        \\{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no \"sampling\""}}
        \\
    , w.buffered());
}

test "a line is a reply, a notification or a request; anything else is garbage" {
    var arena_state: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena_state.deinit();
    const arena = arena_state.allocator();

    const ok = try parse(arena, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":[]}}");
    try std.testing.expectEqual(@as(?u64, 3), ok.reply.id);
    try std.testing.expect(ok.reply.outcome.result.object.get("tools") != null);

    const failed = try parse(arena, "{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":-32602,\"message\":\"bad\"}}");
    try std.testing.expectEqual(@as(i64, -32602), failed.reply.outcome.err.code);
    try std.testing.expectEqualStrings("bad", failed.reply.outcome.err.message);

    const foreign = try parse(arena, "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{}}");
    try std.testing.expectEqual(@as(?u64, null), foreign.reply.id);

    const note = try parse(arena, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}");
    try std.testing.expectEqualStrings("notifications/progress", note.notification.method);

    const ping = try parse(arena, "{\"jsonrpc\":\"2.0\",\"id\":\"p-1\",\"method\":\"ping\"}");
    try std.testing.expectEqualStrings("\"p-1\"", ping.request.id_json);
    try std.testing.expectEqualStrings("ping", ping.request.method);

    const garbage = [_][]const u8{
        "hello",
        "[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}]",
        "{\"id\":1,\"result\":{}}",
        "{\"jsonrpc\":\"1.0\",\"id\":1,\"result\":{}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":\"no\"}",
        "{\"jsonrpc\":\"2.0\",\"method\":5}",
        "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}",
    };
    for (garbage) |line| try std.testing.expectError(error.Garbage, parse(arena, line));
}
