//! The OpenAI chunks that carry nothing but a bit of a message, nearly every chunk of a
//! stream, read by hand: one choice (index 0) whose delta holds text, reasoning text or more
//! arguments of a tool call already named; no finish_reason, usage, error or reasoning_details
//! (OpenRouter's: an empty array at most). Key by key, in any order, unknown fields skipped
//! (and checked valid, as std.json does), known fields at most once. Anything else, or any doubt, answers null and the chunk takes the general
//! decoding (decode.zig), whose result for these chunks is the same.
const std = @import("std");
const Allocator = std.mem.Allocator;
const fast_json = @import("../../fast_json.zig");
const Shape = fast_json.Shape;
const keyIs = fast_json.keyIs;

pub const Delta = union(enum) {
    content: []const u8,
    reasoning: Reasoning,
    /// More arguments of the tool call at `index` (no id, no name: it is open already, or
    /// starts nameless as the general path would start it).
    tool_arguments: struct { index: u32, arguments: []const u8 },
};

/// Reasoning text and the name the server gave it (`reasoning_content`, `reasoning`,
/// `reasoning_text`): the name it goes back under, when it does (request.zig).
pub const Reasoning = struct { text: []const u8, name: []const u8 };

pub const Chunk = struct {
    /// WireChunk's defaults when absent.
    id: []const u8 = "",
    model: []const u8 = "",
    delta: Delta,
};

/// The bytes every chunk of a stream starts with (id, object, created, model,
/// system_fingerprint...) up to its "choices" key, as the last chunk read from scratch had
/// them, and what reading them gave. A chunk that starts with the same bytes is read on from
/// there: the same bytes read the same, so they are compared (one vector pass), not parsed.
pub const Prefix = struct {
    bytes: [max_prefix]u8 = undefined,
    /// 0: nothing remembered.
    len: usize = 0,
    /// Where id and model are in the prefix (they are not escaped: escaped values are
    /// decoded into memory that does not last, and such a prefix is not remembered).
    id: Span = .{},
    model: Span = .{},
    seen: Seen = .{},

    const max_prefix = 512;
    const Span = struct { start: usize = 0, len: usize = 0 };

    fn spanOf(data: []const u8, value: []const u8) ?Span {
        if (value.len == 0) return .{};
        const start = @intFromPtr(value.ptr) -% @intFromPtr(data.ptr);
        if (start > data.len or value.len > data.len - start) return null;
        return .{ .start = start, .len = value.len };
    }

    fn remember(p: *Prefix, data: []const u8, len: usize, top: Top) void {
        if (len > max_prefix) return;
        // Data of several SSE lines holds line ends, which must not be skipped over in an
        // event read from the received bytes (parseEvent).
        if (std.mem.indexOfAny(u8, data[0..len], "\r\n") != null) return;
        const id = spanOf(data, top.id) orelse return;
        const model = spanOf(data, top.model) orelse return;
        @memcpy(p.bytes[0..len], data[0..len]);
        p.len = len;
        p.id = id;
        p.model = model;
        p.seen = top.seen;
    }
};

/// What reading the top-level object gave so far.
const Top = struct {
    id: []const u8 = "",
    model: []const u8 = "",
    seen: Seen = .{},
};

/// Reads a chunk, the data of an SSE event.
pub fn parse(arena: Allocator, data: []const u8, prefix: *Prefix) Allocator.Error!?Chunk {
    var s = Shape.init(arena, data);
    return object(&s, data, prefix, .data);
}

/// A chunk's whole SSE event, framed as the API frames it, `data: {chunk}\n\n`, read from
/// the received bytes without the SSE parser: the same chunk, with one pass fewer over it.
/// `len` is how many bytes it took. Null for anything else, including an event `bytes` does
/// not hold whole: the SSE parser reads those.
pub fn parseEvent(arena: Allocator, bytes: []const u8, prefix: *Prefix) Allocator.Error!?struct { chunk: Chunk, len: usize } {
    const framing = "data: ";
    if (bytes.len < framing.len or !std.mem.eql(u8, bytes[0..framing.len], framing)) return null;
    const json = bytes[framing.len..];
    // One line: a CR or LF between the tokens would end the SSE data line there.
    var s = Shape.initOneLine(arena, json);
    const chunk = try object(&s, json, prefix, .event) orelse return null;
    return .{ .chunk = chunk, .len = framing.len + s.position() };
}

/// The chunk object, then the end of the data (`.data`) or of the SSE event (`.event`: the
/// blank line right after the object).
fn object(s: *Shape, data: []const u8, prefix: *Prefix, comptime ends: enum { data, event }) Allocator.Error!?Chunk {
    var top: Top = .{};
    var delta: ?Delta = null;
    var resumed = false;
    if (prefix.len > 0 and data.len > prefix.len and fast_json.sameBytes(data[0..prefix.len], prefix.bytes[0..prefix.len])) {
        s.rewind(prefix.len);
        top = .{
            .id = data[prefix.id.start..][0..prefix.id.len],
            .model = data[prefix.model.start..][0..prefix.model.len],
            .seen = prefix.seen,
        };
        resumed = true;
    } else if (!s.token('{')) return null;
    var choices_at: ?usize = null;
    var before_choices: Top = .{};
    while (true) {
        const key_at = s.position();
        const key = try s.key() orelse return null;
        if (keyIs(key, "id")) {
            if (!top.seen.first("id")) return null;
            top.id = try s.string() orelse return null;
        } else if (keyIs(key, "model")) {
            if (!top.seen.first("model")) return null;
            top.model = try s.string() orelse return null;
        } else if (keyIs(key, "choices")) {
            choices_at = key_at;
            before_choices = top;
            if (!top.seen.first("choices")) return null;
            delta = try choices(s) orelse return null;
        } else if (keyIs(key, "usage")) {
            if (!top.seen.first("usage") or !s.isNull()) return null;
        } else if (keyIs(key, "error")) {
            return null;
        } else if (!s.skip()) return null;
        // What the API sends after "choices" (stream_options.include_usage puts a null usage
        // in every chunk), byte for byte; else key by key.
        if (s.literal(",\"usage\":null,\"obfuscation\":")) {
            if (!top.seen.first("usage") or !s.skip()) return null;
        }
        if (s.token(',')) continue;
        if (s.token('}')) break;
        return null;
    }
    switch (ends) {
        .data => if (!s.end()) return null,
        .event => if (!s.literal("\n\n")) return null,
    }
    const found = delta orelse return null;
    if (!resumed) if (choices_at) |at| prefix.remember(data, at, before_choices);
    return .{ .id = top.id, .model = top.model, .delta = found };
}

/// Which known fields of the object being read were seen (std.json refuses duplicates).
const Seen = struct {
    bits: u32 = 0,

    fn first(seen: *Seen, comptime name: []const u8) bool {
        const bit = comptime bitOf(name);
        if (seen.bits & bit != 0) return false;
        seen.bits |= bit;
        return true;
    }

    fn bitOf(comptime name: []const u8) u32 {
        const names = [_][]const u8{
            "id",      "model",             "choices", "usage",      "index", "delta",     "finish_reason",
            "content", "reasoning_content", "refusal", "tool_calls", "name",  "arguments", "function",
            "reasoning", "reasoning_text", "reasoning_details",
        };
        for (names, 0..) |n, i| if (std.mem.eql(u8, n, name)) return 1 << i;
        @compileError("no bit for " ++ name);
    }
};

/// `[ {choice} ]`: exactly one choice, index 0, no finish_reason.
fn choices(s: *Shape) Allocator.Error!?Delta {
    // The form the API sends text in, byte for byte; else key by key.
    const start = s.position();
    if (s.literal("[{\"index\":0,\"delta\":{\"content\":")) {
        if (try s.string()) |text| {
            if (s.literal("},\"logprobs\":null,\"finish_reason\":null}]")) return .{ .content = text };
        }
        s.rewind(start);
    }
    if (!s.token('[') or !s.token('{')) return null;
    var delta: ?Delta = null;
    var seen: Seen = .{};
    while (true) {
        const key = try s.key() orelse return null;
        if (keyIs(key, "index")) {
            if (!seen.first("index")) return null;
            if (!s.token('0')) return null; // 0 only (a plain integer: `01` fails the `,`/`}` check)
        } else if (keyIs(key, "delta")) {
            if (!seen.first("delta")) return null;
            delta = try deltaOf(s) orelse return null;
        } else if (keyIs(key, "finish_reason")) {
            if (!seen.first("finish_reason") or !s.isNull()) return null;
        } else if (!s.skip()) return null; // logprobs and the like
        if (s.token(',')) continue;
        if (s.token('}')) break;
        return null;
    }
    if (!s.token(']')) return null;
    return delta;
}

/// The delta object: one kind of content and nothing that would change the message's course.
fn deltaOf(s: *Shape) Allocator.Error!?Delta {
    if (!s.token('{')) return null;
    var delta: ?Delta = null;
    var seen: Seen = .{};
    if (s.token('}')) return null;
    while (true) {
        const key = try s.key() orelse return null;
        if (keyIs(key, "content")) {
            if (!seen.first("content")) return null;
            if (!s.isNull()) {
                if (delta != null) return null;
                delta = .{ .content = try s.string() orelse return null };
            }
        } else if (keyIs(key, "reasoning_content")) {
            if (!seen.first("reasoning_content")) return null;
            if (!try reasoning(s, &delta, "reasoning_content")) return null;
        } else if (keyIs(key, "reasoning")) {
            if (!seen.first("reasoning")) return null;
            if (!try reasoning(s, &delta, "reasoning")) return null;
        } else if (keyIs(key, "reasoning_text")) {
            if (!seen.first("reasoning_text")) return null;
            if (!try reasoning(s, &delta, "reasoning_text")) return null;
        } else if (keyIs(key, "reasoning_details")) {
            // OpenRouter's, beside `reasoning`: none here, or the general path assembles them.
            if (!seen.first("reasoning_details") or !(s.isNull() or s.literal("[]"))) return null;
        } else if (keyIs(key, "refusal")) {
            if (!seen.first("refusal") or !s.isNull()) return null;
        } else if (keyIs(key, "tool_calls")) {
            if (!seen.first("tool_calls") or delta != null) return null;
            delta = try toolCall(s) orelse return null;
        } else if (!s.skip()) return null; // role and the like
        if (s.token(',')) continue;
        if (s.token('}')) break;
        return null;
    }
    return delta;
}

/// A reasoning text under any of its names (decode.zig, WireDelta.thinking), or null; false
/// when the delta holds something else too (two names at once: the general path picks one).
fn reasoning(s: *Shape, delta: *?Delta, comptime name: []const u8) Allocator.Error!bool {
    if (s.isNull()) return true;
    if (delta.* != null) return false;
    delta.* = .{ .reasoning = .{ .text = try s.string() orelse return false, .name = name } };
    return true;
}

/// `[ {"index": n, "function": {"arguments": "..."}} ]`: one call, no id, no name.
fn toolCall(s: *Shape) Allocator.Error!?Delta {
    if (!s.token('[') or !s.token('{')) return null;
    var index: u32 = 0;
    var arguments: ?[]const u8 = null;
    var seen: Seen = .{};
    while (true) {
        const key = try s.key() orelse return null;
        if (keyIs(key, "index")) {
            if (!seen.first("index")) return null;
            index = s.integer(u32) orelse return null;
        } else if (keyIs(key, "id")) {
            if (!seen.first("id") or !s.isNull()) return null;
        } else if (keyIs(key, "function")) {
            if (!seen.first("function")) return null;
            arguments = try functionArguments(s) orelse return null;
        } else if (!s.skip()) return null; // type
        if (s.token(',')) continue;
        if (s.token('}')) break;
        return null;
    }
    if (!s.token(']')) return null;
    return .{ .tool_arguments = .{ .index = index, .arguments = arguments orelse return null } };
}

/// `{"arguments": "..."}` (a null name may stand beside it).
fn functionArguments(s: *Shape) Allocator.Error!?[]const u8 {
    if (!s.token('{')) return null;
    var arguments: ?[]const u8 = null;
    var seen: Seen = .{};
    if (s.token('}')) return null;
    while (true) {
        const key = try s.key() orelse return null;
        if (keyIs(key, "arguments")) {
            if (!seen.first("arguments")) return null;
            arguments = try s.string() orelse return null;
        } else if (keyIs(key, "name")) {
            if (!seen.first("name") or !s.isNull()) return null;
        } else if (!s.skip()) return null;
        if (s.token(',')) continue;
        if (s.token('}')) break;
        return null;
    }
    return arguments;
}
