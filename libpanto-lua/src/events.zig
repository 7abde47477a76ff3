//! Event tables: a PantoEvent as the Lua table stream:next() returns, built with the event
//! keys and kind names held as upvalues of the stream methods (the per-event hot path).

const std = @import("std");
const c = @import("c");
const h = @import("helpers.zig");
const json = @import("json.zig");
const part_infos = @import("part_infos.zig");

const State = h.State;
const slice = h.slice;
const pushSlice = h.pushSlice;
const pop = h.pop;
const protectedCall = h.protectedCall;

/// The keys of event tables. With the event and block kind names they are made once per Lua
/// state, as upvalues of the stream methods (the names, below): setting a field then copies
/// a string already made, where lua_setfield would intern the C string (a strcmp) each time,
/// and an upvalue is the cheapest value to push (no table lookup).
pub const Key = enum {
    kind,
    id,
    model,
    index,
    block_kind,
    text,
    stop_reason,
    provider_stop_reason,
    usage,
    input_tokens,
    output_tokens,
    cache_read_tokens,
    cache_write_tokens,
    reasoning_tokens,
    name,
    input_json,
    awaiting_result,
    content,
    is_error,
    attempt,
    delay_ms,
    http_status,
    reason,
    parts,
    tokens_before,
    tokens_after,
    message_count,
    summary,
    request_id,
    sequential,
    citations,
    fraction,
    web_search_requests,
    web_fetch_requests,
    cost,
    calls,
    budget_kind,
    source,
};
const key_count = @typeInfo(Key).@"enum".fields.len;
/// The names, upvalues 1..names_count of every stream method: keys at 1..key_count, then
/// event kinds 1..max_event_kind, then block kinds 0..max_block_kind.
const max_event_kind = c.PANTO_EVENT_USER_MESSAGE;
const max_block_kind = c.PANTO_BLOCK_SERVER_BLOCK;
const event_kind_base = key_count;
const block_kind_base = event_kind_base + max_event_kind + 1;
const names_count: c_int = block_kind_base + max_block_kind + 1;

/// The upvalues of every stream method: the names, then the stream metatable (so that
/// next() checks its argument without luaL_checkudata's registry lookup by name).
pub const method_upvalues: c_int = names_count + 1;
pub const stream_metatable_upvalue = c.lua_upvalueindex(names_count + 1);

/// Pushes the method_upvalues upvalues of the stream methods; the stream metatable is at `mt`.
pub fn pushMethodUpvalues(L: State, mt: c_int) c_int {
    c.luaL_checkstack(L, method_upvalues, "panto: the event names");
    inline for (@typeInfo(Key).@"enum".fields) |f| _ = c.lua_pushstring(L, f.name);
    c.lua_pushnil(L); // event kind 0 is none
    for (1..max_event_kind + 1) |k| _ = c.lua_pushstring(L, c.panto_event_kind_name(@intCast(k)));
    for (0..max_block_kind + 1) |k| _ = c.lua_pushstring(L, c.panto_block_kind_name(@intCast(k)));
    c.lua_pushvalue(L, mt);
    return method_upvalues;
}

/// Pushes a copy of the upvalues of the running stream method.
pub fn pushOwnUpvalues(L: State) void {
    c.luaL_checkstack(L, method_upvalues, "panto: the event names");
    var i: c_int = 1;
    while (i <= method_upvalues) : (i += 1) c.lua_pushvalue(L, c.lua_upvalueindex(i));
}

fn pushName(L: State, i: c_int) void {
    c.lua_pushvalue(L, c.lua_upvalueindex(i));
}

fn pushKey(L: State, key: Key) void {
    pushName(L, @as(c_int, @intFromEnum(key)) + 1); // (widened: the tag type may be u5)
}

/// The value at the top goes into the table below it under `key`. Raw: event tables are
/// fresh and have no metatable.
fn setTop(L: State, key: Key) void {
    pushKey(L, key);
    c.lua_rotate(L, -2, 1);
    c.lua_rawset(L, -3);
}

fn fieldString(L: State, key: Key, s: []const u8) void {
    pushKey(L, key);
    pushSlice(L, s);
    c.lua_rawset(L, -3);
}

fn fieldInteger(L: State, key: Key, n: anytype) void {
    pushKey(L, key);
    c.lua_pushinteger(L, std.math.cast(c.lua_Integer, n) orelse std.math.maxInt(c.lua_Integer));
    c.lua_rawset(L, -3);
}

fn fieldBoolean(L: State, key: Key, b: bool) void {
    pushKey(L, key);
    c.lua_pushboolean(L, @intFromBool(b));
    c.lua_rawset(L, -3);
}

/// The name of an event or block kind: from the names table, or, for a kind newer than this
/// module, from the C ABI.
fn fieldKindName(L: State, key: Key, kind: c_int, comptime first: c_int, comptime last: c_int, comptime base: c_int, name: *const fn (c_int) callconv(.c) [*c]const u8) void {
    pushKey(L, key);
    if (kind >= first and kind <= last)
        pushName(L, base + 1 + kind)
    else
        _ = c.lua_pushstring(L, name(kind));
    c.lua_rawset(L, -3);
}

fn fieldEventKind(L: State, kind: c_int) void {
    fieldKindName(L, .kind, kind, 1, max_event_kind, event_kind_base, c.panto_event_kind_name);
}

fn fieldBlockKind(L: State, kind: c_int) void {
    fieldKindName(L, .block_kind, kind, 0, max_block_kind, block_kind_base, c.panto_block_kind_name);
}

fn setUsage(L: State, ev: *const c.PantoEvent) void {
    pushKey(L, .stop_reason);
    _ = c.lua_pushstring(L, c.panto_stop_reason_name(ev.stop_reason));
    c.lua_rawset(L, -3);
    fieldString(L, .provider_stop_reason, slice(ev.provider_stop_reason));
    // The budget that ended the turn: the library names it in provider_stop_reason.
    if (ev.stop_reason == c.PANTO_STOP_BUDGET) fieldString(L, .budget_kind, slice(ev.provider_stop_reason));
    c.lua_createtable(L, 0, 7);
    fieldInteger(L, .input_tokens, ev.usage.input_tokens);
    fieldInteger(L, .output_tokens, ev.usage.output_tokens);
    fieldInteger(L, .cache_read_tokens, ev.usage.cache_read_tokens);
    fieldInteger(L, .cache_write_tokens, ev.usage.cache_write_tokens);
    fieldInteger(L, .reasoning_tokens, ev.usage.reasoning_tokens);
    // Anthropic's server tools run: at the event's end, apart from its usage (sized structs).
    fieldInteger(L, .web_search_requests, ev.web_search_requests);
    fieldInteger(L, .web_fetch_requests, ev.web_fetch_requests);
    setTop(L, .usage);
    // cost: nil when a price it needs is unknown (the C ABI's -1).
    if (ev.cost >= 0) {
        pushKey(L, .cost);
        c.lua_pushnumber(L, ev.cost);
        c.lua_rawset(L, -3);
    }
}

/// How many fields the table of an event of this kind gets (its hash part is made that size).
fn fieldCount(kind: c_int) c_int {
    return switch (kind) {
        c.PANTO_EVENT_BLOCK_START => 3,
        c.PANTO_EVENT_TOOL_RESULT => 6,
        c.PANTO_EVENT_TOOL_CALL_START => 7,
        c.PANTO_EVENT_PROVIDER_RETRY, c.PANTO_EVENT_COMPACTION_END, c.PANTO_EVENT_TOOL_PROGRESS => 5,
        c.PANTO_EVENT_COMPACTION_START => 3,
        c.PANTO_EVENT_MESSAGE_END, c.PANTO_EVENT_MESSAGE_COMPLETE => 5,
        else => 4,
    };
}

/// Whether the event table at `idx` is a content_delta of a text block (stream:text()). Needs
/// the names as upvalues.
pub fn isTextDelta(L: State, idx_: c_int) bool {
    const idx = c.lua_absindex(L, idx_);
    pushKey(L, .kind);
    _ = c.lua_rawget(L, idx);
    pushName(L, event_kind_base + 1 + c.PANTO_EVENT_CONTENT_DELTA);
    pushKey(L, .block_kind);
    _ = c.lua_rawget(L, idx);
    pushName(L, block_kind_base + 1 + c.PANTO_BLOCK_TEXT);
    const yes = c.lua_rawequal(L, -4, -3) != 0 and c.lua_rawequal(L, -2, -1) != 0;
    pop(L, 4);
    return yes;
}

/// Pushes the field `key` of the event table at `idx` (raw). Needs the names as upvalues.
pub fn pushField(L: State, idx_: c_int, key: Key) c_int {
    const idx = c.lua_absindex(L, idx_);
    pushKey(L, key);
    return c.lua_rawget(L, idx);
}

/// Whether the event table at `idx` is of `kind`. Needs the names as upvalues.
pub fn isKind(L: State, idx_: c_int, kind: c_int) bool {
    const idx = c.lua_absindex(L, idx_);
    pushKey(L, .kind);
    _ = c.lua_rawget(L, idx);
    pushName(L, event_kind_base + 1 + kind);
    const yes = c.lua_rawequal(L, -2, -1) != 0;
    pop(L, 2);
    return yes;
}

/// Pushes the table of an event. Needs the names as upvalues (every stream method).
pub fn pushEvent(L: State, ev: *const c.PantoEvent) void {
    c.lua_createtable(L, 0, fieldCount(ev.kind));
    fieldEventKind(L, ev.kind);
    switch (ev.kind) {
        c.PANTO_EVENT_MESSAGE_START => {
            fieldString(L, .id, slice(ev.id));
            fieldString(L, .model, slice(ev.model));
            const rid = slice(ev.request_id);
            if (rid.len > 0) fieldString(L, .request_id, rid);
        },
        c.PANTO_EVENT_BLOCK_START, c.PANTO_EVENT_CONTENT_DELTA, c.PANTO_EVENT_BLOCK_COMPLETE => {
            fieldInteger(L, .index, ev.index);
            fieldBlockKind(L, ev.block_kind);
            if (ev.kind != c.PANTO_EVENT_BLOCK_START) fieldString(L, .text, slice(ev.text));
            // A server block's type (its text is its JSON), or a text block's citations.
            if (ev.kind == c.PANTO_EVENT_BLOCK_COMPLETE and ev.name.len > 0)
                fieldString(L, if (ev.block_kind == c.PANTO_BLOCK_TEXT) .citations else .name, slice(ev.name));
        },
        c.PANTO_EVENT_MESSAGE_END, c.PANTO_EVENT_MESSAGE_COMPLETE => setUsage(L, ev),
        c.PANTO_EVENT_TOOL_DETAILS => {
            fieldInteger(L, .index, ev.index);
            fieldString(L, .id, slice(ev.id));
            fieldString(L, .name, slice(ev.name));
        },
        c.PANTO_EVENT_TOOL_CALL_START => {
            fieldString(L, .id, slice(ev.id));
            fieldString(L, .name, slice(ev.name));
            fieldString(L, .input_json, slice(ev.text));
            fieldBoolean(L, .awaiting_result, ev.awaiting_result != 0);
            fieldBoolean(L, .sequential, ev.sequential != 0);
            // input: the decoded object; left nil if the text is not JSON (panto checks it).
            _ = c.lua_getfield(L, -1, "input_json");
            if (protectedCall(L, json.jsonDecode, 1, 1)) c.lua_setfield(L, -2, "input") else pop(L, 1);
        },
        c.PANTO_EVENT_TOOL_RESULT => {
            fieldString(L, .id, slice(ev.id));
            fieldString(L, .name, slice(ev.name));
            fieldString(L, .content, slice(ev.text));
            fieldBoolean(L, .is_error, ev.is_error != 0);
            part_infos.push(L, ev);
            setTop(L, .parts);
        },
        c.PANTO_EVENT_PROVIDER_RETRY => {
            fieldInteger(L, .attempt, ev.attempt);
            fieldInteger(L, .delay_ms, ev.delay_ms);
            if (ev.http_status != 0) fieldInteger(L, .http_status, ev.http_status);
            fieldString(L, .reason, slice(ev.text));
        },
        c.PANTO_EVENT_COMPACTION_START => {
            fieldInteger(L, .tokens_before, ev.tokens_before);
            fieldString(L, .reason, slice(ev.text));
        },
        c.PANTO_EVENT_COMPACTION_END => {
            fieldInteger(L, .tokens_before, ev.tokens_before);
            fieldInteger(L, .tokens_after, ev.tokens_after);
            fieldInteger(L, .message_count, ev.message_count);
            fieldString(L, .summary, slice(ev.text));
        },
        c.PANTO_EVENT_TOOL_PROGRESS => {
            fieldString(L, .id, slice(ev.id));
            fieldString(L, .name, slice(ev.name));
            fieldString(L, .text, slice(ev.text));
            // fraction: nil when the tool gave text only (the C ABI's -1).
            if (ev.fraction >= 0) {
                pushKey(L, .fraction);
                c.lua_pushnumber(L, ev.fraction);
                c.lua_rawset(L, -3);
            }
        },
        c.PANTO_EVENT_APPROVAL_REQUEST => {
            // calls: {{id =, name =, input_json =, input =}, ...}, as a tool_call_start names a call.
            c.lua_createtable(L, @intCast(ev.approval_count), 0);
            for (0..ev.approval_count) |i| {
                const call = ev.approvals[i];
                c.lua_createtable(L, 0, 4);
                fieldString(L, .id, slice(call.id));
                fieldString(L, .name, slice(call.name));
                fieldString(L, .input_json, slice(call.input));
                _ = c.lua_getfield(L, -1, "input_json");
                if (protectedCall(L, json.jsonDecode, 1, 1)) c.lua_setfield(L, -2, "input") else pop(L, 1);
                c.lua_rawseti(L, -2, @intCast(i + 1));
            }
            setTop(L, .calls);
        },
        c.PANTO_EVENT_USER_MESSAGE => {
            fieldString(L, .source, slice(ev.name));
            fieldString(L, .text, slice(ev.text));
        },
        else => {}, // a kind newer than this module: only its name
    }
}

