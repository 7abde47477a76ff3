//! The conversation of a panto.Agent as a document: export and import (the versioned JSON of
//! include/panto.h), its message count, editing (truncate, drop_last, rollback_turn) and
//! compact(). Failures
//! raise a panto.Error: code "conversation" for a refused document or cut, "busy" during a
//! turn, "invalid_argument" for a count past the end, "state" when there is nothing to compact.

const std = @import("std");
const c = @import("c");
const h = @import("helpers.zig");
const agent = @import("agent.zig");
const errors = @import("errors.zig");

const State = h.State;
const slice = h.slice;
const pushSlice = h.pushSlice;

/// agent:export(): the conversation as a versioned JSON document (a string), which
/// agent:import of any agent, in any language, takes back byte for byte.
fn agentExport(L: State) callconv(.c) c_int {
    const a = agent.checkOpenAgent(L, 1);
    var out = std.mem.zeroes(c.PantoString);
    const rc = c.panto_agent_export(a.handle, &out);
    if (rc < 0) agent.raiseAgentError(L, a, rc);
    pushSlice(L, slice(out));
    return 1;
}

/// agent:import(text): replaces the conversation with a document of agent:export. Raises a
/// panto.Error with code "conversation" naming the first problem; the agent is unchanged.
fn agentImport(L: State) callconv(.c) c_int {
    const a = agent.checkOpenAgent(L, 1);
    // A string only: lua_tolstring would turn a number into one in place.
    c.luaL_checktype(L, 2, c.LUA_TSTRING);
    const rc = c.panto_agent_import(a.handle, h.toPantoString(L, 2));
    if (rc < 0) agent.raiseAgentError(L, a, rc);
    return 0;
}

fn messageCount(L: State, a: *agent.Agent) usize {
    var count: usize = 0;
    const rc = c.panto_agent_message_count(a.handle, &count);
    if (rc < 0) agent.raiseAgentError(L, a, rc);
    return count;
}

/// agent:message_count(): the number of messages in the conversation.
fn agentMessageCount(L: State) callconv(.c) c_int {
    const a = agent.checkOpenAgent(L, 1);
    c.lua_pushinteger(L, @intCast(messageCount(L, a)));
    return 1;
}

/// agent:spent(): {usage = {input_tokens, output_tokens, cache_read_tokens,
/// cache_write_tokens, reasoning_tokens}, cost = USD or nil (unknown)}: what the
/// conversation's assistant messages used and cost (panto_agent_spent).
fn agentSpent(L: State) callconv(.c) c_int {
    const a = agent.checkOpenAgent(L, 1);
    var u: c.PantoUsage = undefined;
    var cost: f64 = -1;
    const rc = c.panto_agent_spent(a.handle, &u, &cost);
    if (rc < 0) agent.raiseAgentError(L, a, rc);
    c.lua_createtable(L, 0, 2);
    c.lua_createtable(L, 0, 5);
    inline for (.{ "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens" }) |name| {
        c.lua_pushinteger(L, @intCast(@field(u, name)));
        c.lua_setfield(L, -2, name);
    }
    c.lua_setfield(L, -2, "usage");
    if (cost >= 0) {
        c.lua_pushnumber(L, cost);
        c.lua_setfield(L, -2, "cost");
    }
    return 1;
}

fn truncate(L: State, a: *agent.Agent, count: usize) c_int {
    const rc = c.panto_agent_truncate(a.handle, count);
    if (rc < 0) agent.raiseAgentError(L, a, rc);
    c.lua_pushinteger(L, @intCast(count));
    return 1;
}

fn checkCount(L: State, arg: c_int, default: ?c.lua_Integer) usize {
    const n = if (default) |d| c.luaL_optinteger(L, arg, d) else c.luaL_checkinteger(L, arg);
    if (n < 0) _ = c.luaL_argerror(L, arg, "a count of messages must not be negative");
    return @intCast(n);
}

/// agent:truncate(k): keeps the first k messages. Returns k. Raises "invalid_argument" when
/// k is larger than the count, "conversation" when it would keep tool calls without their
/// results; nothing changes then.
fn agentTruncate(L: State) callconv(.c) c_int {
    const a = agent.checkOpenAgent(L, 1);
    return truncate(L, a, checkCount(L, 2, null));
}

/// agent:rollback_turn(): removes the last turn when it failed or was canceled after keeping
/// something (a partial answer, tool rounds): its user message and every message after it.
/// Returns how many messages were removed, 0 when there is nothing to roll back (a turn that
/// failed keeping nothing took its user message back out by itself). Raises "busy" during a
/// turn.
fn agentRollbackTurn(L: State) callconv(.c) c_int {
    const a = agent.checkOpenAgent(L, 1);
    var removed: usize = 0;
    const rc = c.panto_agent_rollback_turn(a.handle, &removed);
    if (rc < 0) agent.raiseAgentError(L, a, rc);
    c.lua_pushinteger(L, @intCast(removed));
    return 1;
}

/// agent:drop_last([n]): drops the last n messages (default 1): truncate(message_count() - n).
/// Returns the count left.
fn agentDropLast(L: State) callconv(.c) c_int {
    const a = agent.checkOpenAgent(L, 1);
    const n = checkCount(L, 2, 1);
    const count = messageCount(L, a);
    if (n > count) {
        var buf: [160]u8 = undefined;
        const msg = std.fmt.bufPrint(&buf, "cannot drop {d} messages: the conversation has {d}", .{ n, count }) catch unreachable;
        errors.pushSimpleError(L, c.PANTO_ERR_INVALID_ARGUMENT, msg);
        return c.lua_error(L);
    }
    return truncate(L, a, count - n);
}

/// agent:compact([instructions]): summarizes the older messages now; returns a stream read
/// like run's: compaction_start, compaction_end, then message_complete (the summary request's
/// usage). `instructions` (what the summary should keep or stress) are appended to the
/// compaction prompt of this summary alone. Raises "state" when nothing is older than
/// keep_recent_tokens, "busy" during a turn.
fn agentCompact(L: State) callconv(.c) c_int {
    const a = agent.checkOpenAgent(L, 1);
    var instructions: c.PantoString = .{ .ptr = null, .len = 0 };
    if (!h.isNoneOrNil(L, 2)) {
        c.luaL_checktype(L, 2, c.LUA_TSTRING);
        instructions = h.toPantoString(L, 2);
    }
    // (the string stays on the stack, below the stream, until the call returns)
    c.lua_settop(L, 2);
    const s = agent.pushStream(L, true);
    var handle: ?*c.PantoStream = null;
    const rc = c.panto_agent_compact_with(a.handle, instructions, &handle);
    return agent.attachStream(L, a, s, rc, handle, "panto_agent_compact_with");
}

/// The agent methods of this file.
pub const methods = [_]c.luaL_Reg{
    h.reg("export", agentExport),
    h.reg("import", agentImport),
    h.reg("message_count", agentMessageCount),
    h.reg("spent", agentSpent),
    h.reg("truncate", agentTruncate),
    h.reg("drop_last", agentDropLast),
    h.reg("rollback_turn", agentRollbackTurn),
    h.reg("compact", agentCompact),
};
