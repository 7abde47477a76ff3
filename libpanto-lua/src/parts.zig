//! Given parts: what a program gives as a user turn (agent:run) or as a tool result (a handler's
//! return value, stream:submit_tool_result) made into the PantoPart array of panto.h. The array
//! lives in a userdata box on the Lua stack (a raised error leaks nothing) and borrows the
//! strings of the Lua values, which stay on the stack, unchanged, during the C call.
//!
//! A part is a string (text) or media: a media value (panto.media, panto.image,
//! panto.document) or, in a result's `attachments`, a table of the same fields
//! {data = bytes, media_type = hint, name = name}. Anything else is refused with a message
//! naming the part, before anything is sent.

const std = @import("std");
const c = @import("c");
const h = @import("helpers.zig");
const media = @import("media.zig");
const json = @import("json.zig");

const State = h.State;
const pop = h.pop;
const fail = h.fail;
const typeName = h.typeName;
const toPantoString = h.toPantoString;

const empty: c.PantoString = .{ .ptr = null, .len = 0 };

/// Pushes a box of `n` parts, zeroed, and returns them; no parts: pushes nil.
fn pushBox(L: State, n: usize) []c.PantoPart {
    if (n == 0) {
        c.lua_pushnil(L);
        return &.{};
    }
    const mem = c.lua_newuserdatauv(L, n * @sizeOf(c.PantoPart), 0).?;
    const parts: [*]c.PantoPart = @ptrCast(@alignCast(mem));
    @memset(parts[0..n], std.mem.zeroes(c.PantoPart));
    return parts[0..n];
}

/// The parts of the box at `idx` (nil or none: no parts).
pub fn ofBox(L: State, idx: c_int) []const c.PantoPart {
    if (c.lua_type(L, idx) != c.LUA_TUSERDATA) return &.{};
    const n = c.lua_rawlen(L, idx) / @sizeOf(c.PantoPart);
    const parts: [*]const c.PantoPart = @ptrCast(@alignCast(c.lua_touserdata(L, idx).?));
    return parts[0..n];
}

/// A table key at `idx` for a message: the string, or the name of its type.
fn keyName(L: State, idx: c_int) []const u8 {
    return if (c.lua_type(L, idx) == c.LUA_TSTRING) h.toSlice(L, idx) else typeName(L, idx);
}

/// A media table at `idx` (a media value or an attachment table) into `out`. `what` and `i`
/// name it in a message: "part 2", "attachment 1".
fn setMedia(L: State, idx_: c_int, out: *c.PantoPart, what: []const u8, i: usize) void {
    const idx = c.lua_absindex(L, idx_);
    c.lua_pushnil(L);
    while (c.lua_next(L, idx) != 0) {
        pop(L, 1);
        const known = c.lua_type(L, -1) == c.LUA_TSTRING and for ([_][]const u8{ "data", "media_type", "name" }) |k| {
            if (std.mem.eql(u8, h.toSlice(L, -1), k)) break true;
        } else false;
        if (!known) fail(L, null, "{s} {d}: unknown key '{s}' (media has data, media_type and name)", .{ what, i, keyName(L, -1) });
    }
    out.kind = c.PANTO_PART_MEDIA;
    if (h.field(L, idx, "data") != c.LUA_TSTRING)
        fail(L, null, "{s} {d}: data must be a string of bytes, not {s}", .{ what, i, typeName(L, -1) });
    out.data = @ptrCast(c.lua_tolstring(L, -1, &out.data_len));
    pop(L, 1);
    out.media_type = optField(L, idx, "media_type", what, i);
    out.name = optField(L, idx, "name", what, i);
}

/// A string field of a media table, or nil.
fn optField(L: State, idx: c_int, key: [*:0]const u8, what: []const u8, i: usize) c.PantoString {
    defer pop(L, 1);
    return switch (h.field(L, idx, key)) {
        c.LUA_TNIL => empty,
        c.LUA_TSTRING => toPantoString(L, -1),
        else => fail(L, null, "{s} {d}: {s} must be a string, not {s}", .{ what, i, std.mem.span(key), typeName(L, -1) }),
    };
}

/// The part at `idx`, a string or a media value, into `out`; raises naming it "part i".
fn setPart(L: State, idx: c_int, out: *c.PantoPart, i: usize) void {
    if (c.lua_type(L, idx) == c.LUA_TSTRING) {
        out.kind = c.PANTO_PART_TEXT;
        out.text = toPantoString(L, idx);
    } else if (media.isMedia(L, idx)) {
        setMedia(L, idx, out, "part", i);
    } else {
        fail(L, null, "part {d} is a {s}: a part is a string or media (panto.image, panto.document, panto.media)", .{ i, typeName(L, idx) });
    }
}

/// The length of the list of parts at `idx`, whose keys must be exactly 1..n.
fn listLength(L: State, idx: c_int, what: []const u8) usize {
    const n: usize = @intCast(c.lua_rawlen(L, idx));
    var count: usize = 0;
    c.lua_pushnil(L);
    while (c.lua_next(L, idx) != 0) : (count += 1) pop(L, 1);
    if (count != n) fail(L, null, "{s} must be a list (keys 1 to n), it has other keys", .{what});
    return n;
}

/// Pushes the box of the parts of the list at `idx` (strings and media values).
fn pushList(L: State, idx_: c_int) void {
    const idx = c.lua_absindex(L, idx_);
    const n = listLength(L, idx, "a list of parts");
    const parts = pushBox(L, n);
    for (parts, 1..) |*part, i| {
        _ = c.lua_rawgeti(L, idx, @intCast(i));
        setPart(L, -1, part, i);
        pop(L, 1); // the string stays alive in the list
    }
}

/// Whether the table at `idx` is a list of parts rather than a value to send as JSON: one of
/// its list items is media. (A list of strings alone stays the JSON array it always was.)
fn hasMediaItem(L: State, idx: c_int) bool {
    const n = c.lua_rawlen(L, idx);
    var i: c.lua_Integer = 1;
    while (i <= n) : (i += 1) {
        _ = c.lua_rawgeti(L, idx, i);
        const found = media.isMedia(L, -1);
        pop(L, 1);
        if (found) return true;
    }
    return false;
}

/// agent:run's input at `idx`: a string (the text), a media value, or a list of parts. Pushes
/// the box of parts (nil for a string) and returns the PantoInput, which borrows from the
/// stack. Raises a bad-argument error naming the part at fault.
pub fn pushInput(L: State, idx: c_int) c.PantoInput {
    var input = std.mem.zeroes(c.PantoInput);
    input.size = @sizeOf(c.PantoInput);
    switch (c.lua_type(L, idx)) {
        // The text as it is, NUL bytes included: what it may hold is panto's to judge.
        c.LUA_TSTRING => {
            input.text = toPantoString(L, idx);
            c.lua_pushnil(L);
            return input;
        },
        c.LUA_TTABLE => {},
        else => _ = c.luaL_typeerror(L, idx, "string or list of parts"),
    }
    c.lua_pushvalue(L, idx);
    if (!h.protectedCall(L, pushInputParts, 1, 1)) {
        const msg: [*c]const u8 = if (c.lua_type(L, -1) == c.LUA_TSTRING) c.lua_tolstring(L, -1, null) else "not a list of parts";
        _ = c.luaL_argerror(L, idx, msg);
    }
    const parts = ofBox(L, -1);
    input.parts = parts.ptr;
    input.part_count = parts.len;
    return input;
}

fn pushInputParts(L: State) callconv(.c) c_int {
    if (media.isMedia(L, 1)) {
        setMedia(L, 1, &pushBox(L, 1)[0], "part", 1);
    } else pushList(L, 1);
    return 1;
}

/// A tool result at `idx` as content and parts: pushes the content string and the box of
/// parts (nil when there are none). The value is
///   - a string: the content;
///   - a media value: one part;
///   - a table with `attachments`: {text = content, attachments = {media, ...}}, each
///     attachment a media value or a table {data =, media_type =, name =};
///   - a list whose items are strings and media, one of them media: the parts in order;
///   - anything else: its JSON, the content (as before parts existed).
/// Raises a message naming what is wrong.
pub fn pushResult(L: State, idx_: c_int) void {
    const idx = c.lua_absindex(L, idx_);
    if (c.lua_type(L, idx) == c.LUA_TSTRING) {
        c.lua_pushvalue(L, idx);
        c.lua_pushnil(L);
        return;
    }
    if (media.isMedia(L, idx)) {
        _ = c.lua_pushstring(L, "");
        setMedia(L, idx, &pushBox(L, 1)[0], "part", 1);
        return;
    }
    if (c.lua_type(L, idx) == c.LUA_TTABLE) {
        const has_attachments = h.field(L, idx, "attachments") != c.LUA_TNIL;
        pop(L, 1);
        if (has_attachments) return pushAttachments(L, idx);
        if (hasMediaItem(L, idx)) {
            _ = c.lua_pushstring(L, "");
            return pushList(L, idx);
        }
    }
    const w = json.newWriter(L);
    json.writeValue(L, w, idx, 0, null);
    json.pushWritten(L, w);
    c.lua_replace(L, -2); // the writer box
    c.lua_pushnil(L);
}

/// {text = "...", attachments = {...}} at `idx`: pushes the text and the box of attachments.
fn pushAttachments(L: State, idx: c_int) void {
    c.lua_pushnil(L);
    while (c.lua_next(L, idx) != 0) {
        pop(L, 1);
        const ok = c.lua_type(L, -1) == c.LUA_TSTRING and
            (std.mem.eql(u8, h.toSlice(L, -1), "text") or std.mem.eql(u8, h.toSlice(L, -1), "attachments"));
        if (!ok) fail(L, null, "a result with attachments has the keys text and attachments, not '{s}'", .{keyName(L, -1)});
    }
    switch (h.field(L, idx, "text")) {
        c.LUA_TNIL => {
            pop(L, 1);
            _ = c.lua_pushstring(L, "");
        },
        c.LUA_TSTRING => {},
        else => fail(L, null, "text must be a string, not {s}", .{typeName(L, -1)}),
    }
    if (h.field(L, idx, "attachments") != c.LUA_TTABLE)
        fail(L, null, "attachments must be a list, not {s}", .{typeName(L, -1)});
    const list = c.lua_absindex(L, -1);
    const n = listLength(L, list, "attachments");
    const parts = pushBox(L, n);
    for (parts, 1..) |*part, i| {
        _ = c.lua_rawgeti(L, list, @intCast(i));
        if (c.lua_type(L, -1) != c.LUA_TTABLE)
            fail(L, null, "attachment {d} is a {s}: an attachment is media (panto.image, ...) or a table {{data = bytes, media_type = ..., name = ...}}", .{ i, typeName(L, -1) });
        setMedia(L, -1, part, "attachment", i);
        pop(L, 1);
    }
    c.lua_replace(L, list); // the box where the list was: text, box
}
