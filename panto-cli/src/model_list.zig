//! `panto --list-models`: the models the configured provider lists for the account
//! (Agent.listModels), a line each: the id, the most input tokens and the list prices per
//! million tokens the catalog gives, or "unknown"; with --json, the library's joined JSON.
const std = @import("std");
const panto = @import("panto");
const exit_codes = @import("exit_codes.zig");

pub fn run(gpa: std.mem.Allocator, arena: std.mem.Allocator, agent: *panto.Agent, json: bool, out: *std.Io.Writer, stderr: *std.Io.Writer) !u8 {
    var detail: panto.errors.Detail = .{};
    defer detail.deinit(gpa);
    var list: std.Io.Writer.Allocating = .init(arena);
    agent.listModels(&list.writer, &detail) catch |err| {
        if (err == error.OutOfMemory) return err;
        try stderr.print("panto: the model list failed ({s}): {s}\n", .{ exit_codes.name(err), detail.message.items });
        return exit_codes.ofError(err);
    };
    if (json) {
        try out.print("{s}\n", .{list.written()});
    } else {
        try writeLines(arena, out, list.written());
    }
    try out.flush();
    return exit_codes.ok;
}

/// A line per model: the id (padded to the longest), then "N input tokens" and "$IN in, $OUT
/// out per Mtok", each "unknown" when the catalog does not say.
pub fn writeLines(arena: std.mem.Allocator, out: *std.Io.Writer, list_json: []const u8) !void {
    const models = try std.json.parseFromSliceLeaky([]const Entry, arena, list_json, .{ .ignore_unknown_fields = true });
    var width: usize = 0;
    for (models) |m| width = @max(width, m.id.len);
    for (models) |m| {
        try out.writeAll(m.id);
        try out.splatByteAll(' ', width - m.id.len + 2);
        const info = m.model_info orelse {
            try out.writeAll("unknown\n");
            continue;
        };
        if (info.max_input_tokens) |n| try out.print("{d} input tokens", .{n}) else try out.writeAll("input tokens unknown");
        try out.writeAll("  ");
        if (info.price.input != null and info.price.output != null) {
            try out.print("${d} in, ${d} out per Mtok\n", .{ info.price.input.?, info.price.output.? });
        } else try out.writeAll("prices unknown\n");
    }
}

const Entry = struct {
    id: []const u8,
    model_info: ?struct {
        max_input_tokens: ?u64 = null,
        price: struct { input: ?f64 = null, output: ?f64 = null } = .{},
    } = null,
};

test "a line per model: the catalog's figures, or unknown" {
    var arena_state: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena_state.deinit();
    var out: std.Io.Writer.Allocating = .init(std.testing.allocator);
    defer out.deinit();
    try writeLines(arena_state.allocator(), &out.writer,
        \\[{"id":"claude-x","display_name":"X","model_info":{"name":"claude-x","max_input_tokens":200000,"price":{"input":3,"output":15,"cache_read":0.3},"abilities":{}}},
        \\ {"id":"other-model","model_info":null},
        \\ {"id":"half","model_info":{"name":"half","price":{"input":1.25},"abilities":{}}}]
    );
    try std.testing.expectEqualStrings(
        \\claude-x     200000 input tokens  $3 in, $15 out per Mtok
        \\other-model  unknown
        \\half         input tokens unknown  prices unknown
        \\
    , out.written());
}
