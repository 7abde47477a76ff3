//! The helpers over a stream's event loop, for the shortest programs: stream:text() (the
//! turn's text as it comes), stream:final_message() and stream:final_json() (the turn's end),
//! stream:request_ids(). They read with next(), so tool handlers run as in a loop of events.

const std = @import("std");
const c = @import("c");
const h = @import("helpers.zig");
const errors = @import("errors.zig");
const events = @import("events.zig");
const json = @import("json.zig");
const stream = @import("stream.zig");

const State = h.State;
const Stream = stream.Stream;
const isNil = h.isNil;
const method_upvalues = events.method_upvalues;

/// Reads the rest of the turn of the stream at index 1 (its handlers run); raises the turn's
/// error. Returns the C handle, which a finished turn keeps until its agent runs another.
fn drain(L: State, s: *Stream) *c.PantoStream {
    while (true) {
        c.lua_settop(L, 1);
        _ = stream.nextOf(L, s);
        if (isNil(L, -1)) break;
    }
    c.lua_settop(L, 1);
    return s.handle orelse {
        errors.pushSimpleError(L, c.PANTO_ERR_STATE, "the turn's end is let go once its agent runs another turn: call final_message or final_json before that");
        _ = c.lua_error(L);
        unreachable;
    };
}

/// stream:final_message(): reads the rest of the turn (running tool handlers) and returns its
/// end: the message_complete event table (stop_reason, provider_stop_reason, usage) with
/// `text`, the text of the turn's last assistant message. Raises the turn's error; works again
/// after the turn's events were read.
fn streamFinalMessage(L: State) callconv(.c) c_int {
    const s = stream.toStream(L, 1);
    const handle = drain(L, s);
    var complete = std.mem.zeroes(c.PantoEvent);
    complete.size = @sizeOf(c.PantoEvent);
    var text: c.PantoString = .{ .ptr = null, .len = 0 };
    const rc = c.panto_stream_final_message(handle, &complete, &text);
    if (rc < 0) {
        stream.pushStreamError(L, handle, rc);
        return c.lua_error(L);
    }
    events.pushEvent(L, &complete);
    h.pushSlice(L, h.slice(text));
    c.lua_setfield(L, -2, "text");
    return 1;
}

/// stream:final_json(): as final_message, then the answer checked against the turn's
/// response_format: returns it decoded (objects as tables, as panto.json_decode does) and its
/// text. Raises a panto.Error with code "output" and the text in `output` when it is not the
/// JSON asked for, "state" when the turn asked for no JSON.
fn streamFinalJson(L: State) callconv(.c) c_int {
    const s = stream.toStream(L, 1);
    const handle = drain(L, s);
    var out: c.PantoString = .{ .ptr = null, .len = 0 };
    const rc = c.panto_stream_final_json(handle, &out);
    if (rc < 0) {
        stream.pushStreamError(L, handle, rc);
        return c.lua_error(L);
    }
    h.pushSlice(L, h.slice(out)); // 2
    c.lua_pushvalue(L, 2);
    if (!h.protectedCall(L, json.jsonDecode, 1, 1)) return c.lua_error(L);
    c.lua_rotate(L, 2, 1);
    return 2;
}

/// stream:text(): an iterator of the turn's text, delta by delta (the content_delta events of
/// text blocks), for a generic for; tool handlers run as in events(). Its fourth value is
/// to-be-closed, so leaving the loop early closes the stream.
fn streamText(L: State) callconv(.c) c_int {
    return stream.pushForLoop(L, textIterate);
}

fn textIterate(L: State) callconv(.c) c_int {
    const si = c.lua_upvalueindex(method_upvalues + 1);
    const s: *Stream = @ptrCast(@alignCast(c.lua_touserdata(L, si).?));
    c.lua_settop(L, 0);
    c.lua_pushvalue(L, si);
    while (true) {
        _ = stream.nextOf(L, s);
        if (isNil(L, -1)) return 1;
        if (events.isTextDelta(L, -1)) {
            _ = events.pushField(L, -1, .text);
            return 1;
        }
    }
}

/// stream:request_ids(): a new list of the provider's request ids of the turn's messages read
/// so far (those that had one), in order.
fn streamRequestIds(L: State) callconv(.c) c_int {
    _ = stream.toStream(L, 1);
    c.lua_settop(L, 1);
    if (c.lua_getiuservalue(L, 1, stream.uv_request_ids) != c.LUA_TTABLE) {
        c.lua_createtable(L, 0, 0);
        return 1;
    }
    h.pushCopy(L, 2);
    return 1;
}

/// Stream methods of this file (stream.zig registers them with the others).
pub const methods = [_]c.luaL_Reg{
    h.reg("text", streamText),
    h.reg("final_message", streamFinalMessage),
    h.reg("final_json", streamFinalJson),
    h.reg("request_ids", streamRequestIds),
};
