//! panto.model_info(provider, model) and agent:model_info(): what panto knows of a model
//! (panto_model_info), as a table in the keys of the config's model_info, or nil.
const std = @import("std");
const c = @import("c");
const h = @import("helpers.zig");
const json = @import("json.zig");

const State = h.State;

/// The library's JSON: nil for `null` (a model panto knows nothing of), else its table
/// ("catalog" is panto.null when only the config's model_info knows the model).
pub fn push(L: State, text: []const u8) void {
    if (std.mem.eql(u8, text, "null")) return c.lua_pushnil(L);
    h.pushSlice(L, text);
    if (!h.protectedCall(L, json.jsonDecode, 1, 1)) _ = c.lua_error(L);
}

/// panto.model_info(provider, model): the model catalog's entry (a dated name finds its
/// alias), or nil when it does not list the model.
fn modelInfo(L: State) callconv(.c) c_int {
    _ = c.luaL_checklstring(L, 1, null);
    _ = c.luaL_checklstring(L, 2, null);
    const provider = h.toPantoString(L, 1);
    const model = h.toPantoString(L, 2);
    var small: [2048]u8 = undefined;
    var n: usize = 0;
    if (c.panto_model_info(provider, model, &small, small.len, &n) < 0)
        return c.luaL_error(L, "panto_model_info failed");
    if (n <= small.len) {
        push(L, small[0..n]);
        return 1;
    }
    const big = std.heap.c_allocator.alloc(u8, n) catch return c.luaL_error(L, "not enough memory");
    defer std.heap.c_allocator.free(big);
    if (c.panto_model_info(provider, model, big.ptr, big.len, &n) < 0 or n > big.len)
        return c.luaL_error(L, "panto_model_info failed");
    push(L, big[0..n]);
    return 1;
}

pub const functions = [_]c.luaL_Reg{h.reg("model_info", modelInfo)};
