//! The Lua 5.4 module `panto`: a Lua C module written in Zig on top of panto's C ABI
//! (include/panto.h). libpanto-lua/README.md documents the Lua API. This file is the entry
//! point, luaopen_panto: it opens each part (its metatables) and makes the module table.
//!
//!   agent.zig              panto.Agent: the configuration, runs, tools, the conversation
//!   conversation.zig       export, import, message_count, truncate, drop_last, rollback_turn, compact
//!   session.zig            agent:session(), agent:fork(), panto.list_sessions
//!   stream.zig             panto.Stream: next(), events(), close, cancel
//!   stream_helpers.zig     stream:text(), final_message(), final_json(), request_ids()
//!   tool_runs.zig          the round's tool handlers, each in a coroutine; panto.sleep, progress
//!   events.zig             a PantoEvent as a Lua table (the per-event hot path)
//!   media.zig              media values: panto.media, panto.image, panto.document
//!   parts.zig              user turns and tool results as the PantoPart arrays of panto.h
//!   part_infos.zig         the parts of a tool_result event, their bytes decoded lazily
//!   timer.zig              the native timer thread of cancel_after
//!   tool_declarations.zig  Lua tool tables -> tool spec JSON
//!   registry.zig           panto.Registry and panto.tool_schema
//!   json.zig               JSON encoding and decoding, panto.null, panto.array
//!   errors.zig             panto.Error
//!   helpers.zig            what they all share
//!
//! Lua raises errors with longjmp, which skips Zig `defer`s and any cleanup a Zig frame would
//! do after the call that raised. So no function here holds a resource that only a Zig frame
//! knows about across a Lua call that can raise (argument checks, lua_push* when memory runs
//! out, lua_error): every C handle goes into its userdata, whose __gc frees it, the moment it
//! exists, and the Zig memory of JSON encoding and decoding lives in boxes (userdata with a
//! __gc) on the Lua stack. Zig frames that raise hold only stack buffers.

const std = @import("std");
const c = @import("c"); // lua.h, lauxlib.h and panto.h, translated by build.zig
const h = @import("helpers.zig");
const agent = @import("agent.zig");
const stream = @import("stream.zig");
const registry = @import("registry.zig");
const json = @import("json.zig");
const errors = @import("errors.zig");
const media = @import("media.zig");
const part_infos = @import("part_infos.zig");
const tool_runs = @import("tool_runs.zig");
const model_info = @import("model_info.zig");

const State = h.State;

comptime {
    // Compiles the C ABI into this module: the extern functions of panto.h bind to its exports.
    _ = @import("panto_c");
}

/// The C ABI's (no thread-local signal stack: see libpanto-c/src/root.zig).
pub const std_options = @import("panto_c").std_options;

/// For a program that embeds this module and drives the core's stream itself (the panto
/// command's Lua host): the module's own tool declarations, tool rounds and JSON, so that its
/// tools behave as the binding's do.
pub const embed = struct {
    /// toolSpec(tool) -> spec JSON, name, handler: a Lua tool table as a spec.
    pub const toolSpec = @import("tool_declarations.zig").toolSpec;
    /// Round, Driver, addPlain, runPass, earliestWake, abandon, suspendCurrent, wakeThread.
    pub const tool_runs = @import("tool_runs.zig");
    /// pushJsonValue, jsonDecode, jsonEncode.
    pub const json = @import("json.zig");
    /// The parts a round's driver is given (parts.ofBox) as the core's content parts.
    pub const ofBox = @import("parts.zig").ofBox;
    pub const PantoPart = @import("panto_c").PantoPart;
    pub const part_reader = @import("panto_c").part_reader;
};

const DlInfo = extern struct {
    fname: ?[*:0]const u8,
    fbase: ?*anyopaque,
    sname: ?[*:0]const u8,
    saddr: ?*anyopaque,
};
extern "c" fn dladdr(addr: ?*const anyopaque, info: *DlInfo) c_int;

var pinned = false;

/// Keeps this shared object loaded for the life of the process. panto's core starts a
/// process-wide thread (the timeout watchdog) that runs code and uses globals of this object;
/// Lua dlcloses a C module when its state closes, so a host that closes a state and opens
/// another (lupa, a server with a state per request) would unmap that code under the thread,
/// or map it again with fresh globals while the old thread still waits on them.
fn pinModule() void {
    if (pinned) return;
    pinned = true;
    var info: DlInfo = undefined;
    if (dladdr(@ptrCast(&luaopen_panto), &info) == 0) return;
    const path = info.fname orelse return;
    // NOLOAD: only a new reference to the object already loaded; NODELETE: never unmapped.
    _ = std.c.dlopen(path, .{ .NOW = true, .NOLOAD = true, .NODELETE = true });
}

/// require("panto"): a fresh module table on every call.
export fn luaopen_panto(L: State) c_int {
    pinModule();
    // luaL_checkversion is a macro: the same call, with the sizes this module was built with.
    c.luaL_checkversion_(L, c.LUA_VERSION_NUM, @sizeOf(c.lua_Integer) * 16 + @sizeOf(c.lua_Number));
    if (c.panto_abi_version() != c.PANTO_ABI_VERSION)
        return c.luaL_error(L, "panto: ABI version %d, but this module was built for %d", @as(c_int, @intCast(c.panto_abi_version())), @as(c_int, c.PANTO_ABI_VERSION));

    agent.open(L);
    stream.open(L);
    registry.open(L);
    errors.open(L);
    json.open(L);
    media.open(L);
    part_infos.open(L);
    tool_runs.open(L);

    c.lua_createtable(L, 0, 16);
    h.setCString(L, "_VERSION", c.panto_version());
    h.setInteger(L, "abi_version", c.panto_abi_version());
    json.pushNull(L);
    c.lua_setfield(L, -2, "null");
    const functions = agent.functions ++ registry.functions ++ json.functions ++ media.functions ++ tool_runs.functions ++ model_info.functions ++ [_]c.luaL_Reg{h.reg_end};
    c.luaL_setfuncs(L, &functions, 0);
    return 1;
}
