//! The models the configured provider lists for the account (its list endpoint, every page
//! followed: providers.zig's `writeListPath` and `parseModelPage`), each joined with what
//! the catalog knows of it, as one JSON array in the provider's order:
//! `[{"id", "display_name" (when given), "created" (RFC 3339, when given), "model_info"
//! (catalog/json.zig's object, or null)}]`. Each page is a one-shot GET on the agent's
//! connections (transport/oneshot.zig), failing as a turn's request would.
const std = @import("std");
const Allocator = std.mem.Allocator;
const Agent = @import("agent.zig").Agent;
const catalog_json = @import("catalog/json.zig");
const conversation = @import("conversation.zig");
const errors = @import("errors.zig");
const providers = @import("providers.zig");
const request = @import("request.zig");
const transport = @import("transport/transport.zig");
const oneshot = @import("transport/oneshot.zig");

/// A model as a page of the provider's list names it.
pub const Listed = struct {
    id: []const u8,
    display_name: ?[]const u8 = null,
    /// RFC 3339 (`2025-02-19T00:00:00Z`), whatever form the provider gave it in.
    created: ?[]const u8 = null,
};

/// A page of the list: its models, and the cursor of the next page (null: the last page).
pub const Page = struct {
    models: []const Listed,
    next: ?[]const u8 = null,
};

/// A list fails as the turn's request would (its detail in the caller's Detail), or with
/// Busy while a stream of the agent is unfinished.
pub const Error = errors.TurnError || error{Busy};

/// More pages than any provider has models for: a cursor going round in circles.
const max_pages = 1000;
/// A page's most bytes: an OpenAI-compatible router's one page of hundreds of models, each
/// described, passes a megabyte.
const max_page = 16 << 20;

/// Writes the joined list (above) to `w`. Nothing is written when it fails.
pub fn write(agent: *Agent, w: *std.Io.Writer, detail: *errors.Detail) Error!void {
    if (agent.busy) return error.Busy;
    const gpa = agent.gpa;
    const config = agent.config;
    var buf: [128]u8 = undefined;
    if (transport.missingKey(config, &buf)) |msg| {
        detail.set(gpa, 0, "authentication_error", msg);
        return error.Authentication;
    }
    var arena_state: std.heap.ArenaAllocator = .init(gpa);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    // (The headers of a request without a conversation: the provider's version and key.)
    const empty: conversation.Conversation = .init(arena);
    const parts: request.RequestParts = .{ .config = config, .conversation = &empty, .tools = &.{}, .granted = &.{} };

    var models: std.ArrayList(Listed) = .empty;
    var cursor: ?[]const u8 = null;
    var pages: usize = 0;
    while (true) : (pages += 1) {
        if (pages == max_pages) {
            detail.set(gpa, 0, "protocol_error", "the provider's model list does not end");
            return error.Protocol;
        }
        var url: std.ArrayList(u8) = .empty;
        try transport.writeListUrl(arena, &url, config.base_url.?, config.provider, cursor);
        var header_list: std.ArrayList(std.http.Header) = .empty;
        var auth: std.ArrayList(u8) = .empty;
        var beta: std.ArrayList(u8) = .empty;
        var headers: request.Headers = .{ .list = &header_list, .auth_buffer = &auth, .beta_buffer = &beta, .gpa = arena };
        try providers.addHeaders(config.provider, &headers, parts);
        try headers.addUser(config.request.extra_headers);
        const answer = try oneshot.send(agent, arena, .{
            .method = .GET,
            .url = url.items,
            .body = "",
            .headers = &headers,
            .provider = config.provider,
            .api_key = config.api_key,
            .max_answer = max_page,
        }, detail);
        const page = providers.parseModelPage(config.provider, arena, answer) catch |err| switch (err) {
            error.OutOfMemory => return error.OutOfMemory,
            error.NotAPage => {
                detail.set(gpa, 0, "protocol_error", "the provider's answer is not a page of its model list");
                return error.Protocol;
            },
        };
        try models.appendSlice(arena, page.models);
        const next = page.next orelse break;
        if (cursor) |c| if (std.mem.eql(u8, c, next)) {
            detail.set(gpa, 0, "protocol_error", "the provider's model list gave the same page twice");
            return error.Protocol;
        };
        cursor = next;
    }
    var out: std.Io.Writer.Allocating = .init(arena);
    writeJoined(&out.writer, @tagName(config.provider), models.items) catch return error.OutOfMemory;
    w.writeAll(out.written()) catch return error.OutOfMemory;
}

/// The models, each with the catalog's entry for it (not the config's model_info, which is
/// the agent's model's).
pub fn writeJoined(w: *std.Io.Writer, provider: []const u8, models: []const Listed) std.Io.Writer.Error!void {
    var s: std.json.Stringify = .{ .writer = w };
    try s.beginArray();
    for (models) |m| {
        try s.beginObject();
        try s.objectField("id");
        try s.write(m.id);
        if (m.display_name) |name| {
            try s.objectField("display_name");
            try s.write(name);
        }
        if (m.created) |created| {
            try s.objectField("created");
            try s.write(created);
        }
        try s.objectField("model_info");
        try s.beginWriteRaw();
        try catalog_json.writeResolved(w, provider, m.id, null);
        s.endWriteRaw();
        try s.endObject();
    }
    try s.endArray();
}

/// A page's body as `T` (the provider's shape of it; unknown members ignored).
pub fn parse(comptime T: type, arena: Allocator, body: []const u8) error{ OutOfMemory, NotAPage }!T {
    return std.json.parseFromSliceLeaky(T, arena, body, .{ .ignore_unknown_fields = true }) catch |err| switch (err) {
        error.OutOfMemory => error.OutOfMemory,
        else => error.NotAPage,
    };
}

/// A Unix time as RFC 3339 in UTC (OpenAI's `created`), in `arena`.
pub fn rfc3339(arena: Allocator, unix: i64) Allocator.Error![]const u8 {
    const secs: std.time.epoch.EpochSeconds = .{ .secs = @intCast(@max(unix, 0)) };
    const day = secs.getEpochDay().calculateYearDay();
    const month_day = day.calculateMonthDay();
    const time = secs.getDaySeconds();
    return std.fmt.allocPrint(arena, "{d:0>4}-{d:0>2}-{d:0>2}T{d:0>2}:{d:0>2}:{d:0>2}Z", .{
        day.year,               month_day.month.numeric(), month_day.day_index + 1,
        time.getHoursIntoDay(), time.getMinutesIntoHour(), time.getSecondsIntoMinute(),
    });
}

/// Appends `value` as a query parameter's value, every byte outside `[A-Za-z0-9._~-]`
/// percent-encoded (a cursor is the provider's opaque text).
pub fn appendQueryValue(gpa: Allocator, out: *std.ArrayList(u8), value: []const u8) Allocator.Error!void {
    for (value) |c| {
        if (std.ascii.isAlphanumeric(c) or std.mem.indexOfScalar(u8, "-._~", c) != null) {
            try out.append(gpa, c);
        } else {
            try out.print(gpa, "%{X:0>2}", .{c});
        }
    }
}

test "rfc3339 of a unix time" {
    var arena_state: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena_state.deinit();
    try std.testing.expectEqualStrings("2023-06-13T00:00:00Z", try rfc3339(arena_state.allocator(), 1686614400));
    try std.testing.expectEqualStrings("1970-01-01T00:00:00Z", try rfc3339(arena_state.allocator(), 0));
    try std.testing.expectEqualStrings("2024-02-29T23:59:59Z", try rfc3339(arena_state.allocator(), 1709251199));
}

test "the joined list: the catalog's entry or null, absent names and dates left out" {
    var out: std.Io.Writer.Allocating = .init(std.testing.allocator);
    defer out.deinit();
    try writeJoined(&out.writer, "anthropic", &.{
        .{ .id = "claude-sonnet-4-5-20250929", .display_name = "Claude Sonnet 4.5", .created = "2025-09-29T00:00:00Z" },
        .{ .id = "claude-not-a-model" },
    });
    const text = out.written();
    try std.testing.expect(std.mem.startsWith(u8, text, "[{\"id\":\"claude-sonnet-4-5-20250929\",\"display_name\":\"Claude Sonnet 4.5\",\"created\":\"2025-09-29T00:00:00Z\",\"model_info\":{\"name\":\"claude-sonnet-4-5-20250929\""));
    try std.testing.expect(std.mem.endsWith(u8, text, "},{\"id\":\"claude-not-a-model\",\"model_info\":null}]"));
    const parsed = try std.json.parseFromSlice(std.json.Value, std.testing.allocator, text, .{});
    defer parsed.deinit();
    try std.testing.expectEqual(@as(usize, 2), parsed.value.array.items.len);
}
