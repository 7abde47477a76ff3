//! panto.Agent: panto.Agent{...} builds the configuration JSON from the options table, and
//! the methods run turns, register tools and read the conversation.

const std = @import("std");
const c = @import("c");
const h = @import("helpers.zig");
const errors = @import("errors.zig");
const json = @import("json.zig");
const decl = @import("tool_declarations.zig");
const registry = @import("registry.zig");
const stream = @import("stream.zig");
const parts = @import("parts.zig");
const conversation = @import("conversation.zig");
const session = @import("session.zig");
const model_info = @import("model_info.zig");

const State = h.State;
const Where = h.Where;
const pop = h.pop;
const pushSlice = h.pushSlice;
const toSlice = h.toSlice;
const slice = h.slice;
const isNil = h.isNil;
const isNoneOrNil = h.isNoneOrNil;
const optBoolean = h.optBoolean;
const protectedCall = h.protectedCall;
const newWriter = json.newWriter;
const pushWritten = json.pushWritten;
const sortedKeys = json.sortedKeys;
const writeToolArray = decl.writeToolArray;
const newError = errors.newError;

pub const tname: [*:0]const u8 = "panto.Agent";

/// User value slot: the table tool name -> handler function.
pub const uv_handlers = 1;

pub const Agent = struct {
    handle: ?*c.PantoAgent,
    /// Its streams that hold a C handle: agent:close() closes them (as Python's close does).
    streams: stream.List = .{},
};

pub fn toAgent(L: State, idx: c_int) *Agent {
    return @ptrCast(@alignCast(c.luaL_checkudata(L, idx, tname).?));
}

pub fn checkOpenAgent(L: State, idx: c_int) *Agent {
    const a = toAgent(L, idx);
    if (a.handle == null) _ = c.luaL_error(L, "attempt to use a closed %s", tname);
    return a;
}

fn closeAgent(a: *Agent) void {
    a.streams.closeAll();
    if (a.handle) |handle| {
        a.handle = null;
        c.panto_agent_free(handle);
    }
}

/// Raises the agent's last error (after a failed panto_agent_run, say) as an error table.
pub fn raiseAgentError(L: State, a: *Agent, rc: c_int) noreturn {
    var err = newError();
    _ = c.panto_agent_error(a.handle, &err);
    errors.raise(L, &err, rc);
}

/// buildConfig(options, handlers [, turn, extra]) -> the JSON config of panto_agent_new (or,
/// with `handlers` nil, the changes of panto_agent_set_config; with `turn` true, the options of
/// a turn, PantoInput.options: nil when there are none). The options table (nil: none) is
/// written as it is and panto judges it (include/panto.h lists the keys), except `tools`: a
/// list of tool tables or a panto.Registry, written as their specs, each handler recorded in
/// `handlers`; and, for a turn, `run_tools`, the module's own. `extra`: JSON members written
/// last, as they are. Raises a message on what cannot be written as JSON.
fn buildConfig(L: State) callconv(.c) c_int {
    c.lua_settop(L, 4);
    const turn = c.lua_toboolean(L, 3) != 0;
    const w = newWriter(L); // 5
    if (isNil(L, 1)) c.lua_createtable(L, 0, 0) else c.lua_pushvalue(L, 1);
    c.lua_replace(L, 1);
    const keys = sortedKeys(L, 1, null, "option names"); // 6
    w.write(L, "{");
    var first = true;
    for (keys) |k| {
        if (turn and std.mem.eql(u8, k, "run_tools")) continue;
        pushSlice(L, k);
        _ = c.lua_rawget(L, 1); // 7
        if (std.mem.eql(u8, k, "approval")) {
            // Not the library's: the function that answers the calls waiting for an approval
            // (stream.zig, `decideApprovals`), kept in the handlers table under `true` (no
            // tool's name).
            if (isNil(L, 2) or c.lua_type(L, 7) != c.LUA_TFUNCTION)
                _ = c.luaL_error(L, "option 'approval' is a function, given to panto.Agent{...}");
            c.lua_pushboolean(L, 1);
            c.lua_pushvalue(L, 7);
            c.lua_rawset(L, 2);
            pop(L, 1);
            continue;
        }
        if (!first) w.write(L, ",");
        first = false;
        json.writeString(L, w, k);
        w.write(L, ":");
        if (std.mem.eql(u8, k, "tools")) {
            const where: Where = .{ .label = "option 'tools'" };
            registry.pushToolList(L, 7, &where);
            writeToolArray(L, w, -1, if (isNil(L, 2)) 0 else 2);
            pop(L, 1);
        } else {
            const where: Where = .{ .label = "option", .name = k };
            json.writeField(L, w, k, 7, &where);
        }
        pop(L, 1);
    }
    if (!isNil(L, 4)) {
        if (!first) w.write(L, ",");
        first = false;
        w.write(L, toSlice(L, 4));
    }
    if (turn and first) {
        c.lua_pushnil(L);
        return 1;
    }
    w.write(L, "}");
    pushWritten(L, w);
    return 1;
}

/// Pushes the config JSON of the options table at `options` (buildConfig), and returns true;
/// or, when it cannot be written, pushes nil, message, "config" and returns false.
fn pushConfig(L: State, options: c_int, handlers: c_int) bool {
    c.lua_pushvalue(L, options);
    c.lua_pushvalue(L, handlers);
    if (protectedCall(L, buildConfig, 2, 1)) return true;
    if (c.lua_type(L, -1) != c.LUA_TSTRING) _ = c.lua_error(L); // memory error, say
    c.lua_pushnil(L);
    c.lua_rotate(L, -2, 1);
    _ = c.lua_pushstring(L, c.panto_status_name(c.PANTO_ERR_CONFIG));
    return false;
}

/// Creates an agent userdata at the top of the stack (handle not set yet).
fn newAgentUserdata(L: State) *Agent {
    const a: *Agent = @ptrCast(@alignCast(c.lua_newuserdatauv(L, @sizeOf(Agent), 1).?));
    a.* = .{ .handle = null };
    c.luaL_setmetatable(L, tname);
    return a;
}

/// panto.Agent{provider=, model=, ..., tools=, capabilities=, max_tool_iterations=,
/// read_tool=}: a new agent, or nil, message, "config" when the configuration is refused.
fn agentNew(L: State) callconv(.c) c_int {
    c.luaL_checktype(L, 1, c.LUA_TTABLE);
    c.lua_settop(L, 1);
    c.lua_createtable(L, 0, 0); // 2: the handlers
    if (!pushConfig(L, 1, 2)) return 3;
    const config = h.toPantoString(L, 3);

    // The userdata exists before the agent does, so that no error can leak the agent.
    const a = newAgentUserdata(L); // 4
    c.lua_pushvalue(L, 2);
    _ = c.lua_setiuservalue(L, 4, uv_handlers);
    var handle: ?*c.PantoAgent = null;
    const rc = c.panto_agent_new(config, &handle);
    a.handle = handle;
    if (rc >= 0 and handle != null) return 1;

    c.lua_pushnil(L);
    if (handle) |ah| {
        var err = newError();
        const code = c.panto_agent_error(ah, &err);
        const msg = slice(err.message);
        if (msg.len > 0) pushSlice(L, msg) else _ = c.lua_pushstring(L, c.panto_status_name(rc));
        _ = c.lua_pushstring(L, c.panto_status_name(if (code != 0) code else rc));
        closeAgent(a);
    } else {
        _ = c.lua_pushfstring(L, "cannot create the agent: %s", c.panto_status_name(rc));
        _ = c.lua_pushstring(L, c.panto_status_name(rc));
    }
    return 3;
}

/// Replaces the options table of a turn at `idx` (nil or none: no options) with the JSON of
/// PantoInput.options (nil when there are none), with the members `extra` (JSON text, or
/// null) added; returns `run_tools`. Raises a bad-argument error (argument `arg`) for options
/// that cannot be written.
fn turnOptions(L: State, idx: c_int, arg: c_int, extra: ?[]const u8) bool {
    var run_tools = true;
    if (!isNoneOrNil(L, idx)) {
        c.luaL_checktype(L, idx, c.LUA_TTABLE);
        switch (h.field(L, idx, "run_tools")) {
            c.LUA_TNIL => {},
            c.LUA_TBOOLEAN => run_tools = c.lua_toboolean(L, -1) != 0,
            else => _ = c.luaL_argerror(L, arg, "run_tools must be a boolean"),
        }
        pop(L, 1);
    }
    c.lua_pushvalue(L, idx);
    c.lua_pushnil(L);
    c.lua_pushboolean(L, 1);
    if (extra) |members| pushSlice(L, members) else c.lua_pushnil(L);
    if (!protectedCall(L, buildConfig, 4, 1)) {
        if (c.lua_type(L, -1) != c.LUA_TSTRING) _ = c.lua_error(L); // memory error, say
        _ = c.luaL_argerror(L, arg, c.lua_tolstring(L, -1, null));
    }
    c.lua_replace(L, idx);
    return run_tools;
}

/// Starts a turn of the agent at index 1 with the input at 2 and the options JSON (or nil) at
/// 3; its stream is at 4, the top.
fn startTurn(L: State, a: *Agent, run_tools: bool) void {
    c.lua_settop(L, 3);
    // Checked before anything else is made; borrows from the stack (the parts' box at 4).
    var input = parts.pushInput(L, 2);
    if (!isNil(L, 3)) input.options = h.toPantoString(L, 3);
    const s = pushStream(L, run_tools);
    var handle: ?*c.PantoStream = null;
    const rc = c.panto_agent_run(a.handle, &input, &handle);
    _ = attachStream(L, a, s, rc, handle, "panto_agent_run");
    c.lua_replace(L, 4); // panto copied the input: the stream takes the parts' place
}

/// agent:run(input [, options]): starts a turn and returns its stream. The input is a
/// string, media (panto.image(bytes), ...), or a list of parts: {"Describe this",
/// panto.image(bytes)}. The options are this turn's request parameters (include/panto.h:
/// temperature, tool_choice, max_tokens, system, cache_breakpoint, ...) and `run_tools`
/// (default true: next() runs the handlers). Raises a bad-argument error for a part that is
/// neither a string nor media (nothing is sent), a panto.Error (code "config" for options
/// panto refuses, "busy" while another stream of the agent is unfinished).
fn agentRun(L: State) callconv(.c) c_int {
    const a = checkOpenAgent(L, 1);
    c.luaL_checkany(L, 2);
    c.lua_settop(L, 3);
    const run_tools = turnOptions(L, 3, 3, null);
    startTurn(L, a, run_tools);
    return 1;
}

/// agent:continue_turn([options]): starts a turn that answers the conversation as it is,
/// appending no user message (its last message must be the user's: a question, a tool
/// round's results, e.g. a conversation imported from another process), and returns its
/// stream. Options as agent:run's. Raises a panto.Error with code "conversation" when the
/// conversation does not end with a user message (nothing to answer).
fn agentContinueTurn(L: State) callconv(.c) c_int {
    const a = checkOpenAgent(L, 1);
    c.lua_settop(L, 2);
    const run_tools = turnOptions(L, 2, 2, null); // (the options' JSON or nil replaces them)
    const s = pushStream(L, run_tools);
    const options: c.PantoString = if (isNil(L, 2)) .{ .ptr = null, .len = 0 } else h.toPantoString(L, 2);
    var handle: ?*c.PantoStream = null;
    const rc = c.panto_agent_continue(a.handle, options, &handle);
    return attachStream(L, a, s, rc, handle, "panto_agent_continue");
}

/// agent:resume_turn([options]): goes on with the tool round the agent holds, left waiting
/// for a person (agent:pending_round()), and returns its stream: an approval_request for the
/// calls still asked about (stream:approve / stream:deny), a tool_call_start for each other
/// call (those answered already are not run again), then the turn as any. Options as
/// agent:run's. Raises a panto.Error with code "state" when no round waits.
fn agentResumeTurn(L: State) callconv(.c) c_int {
    const a = checkOpenAgent(L, 1);
    c.lua_settop(L, 2);
    const run_tools = turnOptions(L, 2, 2, null);
    const s = pushStream(L, run_tools);
    const options: c.PantoString = if (isNil(L, 2)) .{ .ptr = null, .len = 0 } else h.toPantoString(L, 2);
    var handle: ?*c.PantoStream = null;
    const rc = c.panto_agent_resume(a.handle, options, &handle);
    return attachStream(L, a, s, rc, handle, "panto_agent_resume");
}

/// agent:pending_round(): the calls of the tool round the agent holds, left waiting for a
/// person, in call order ({} when none waits): {{id =, name =, input_json =, input =, state =
/// "ask" | "to_run" | "started" | "answered"}, ...}. A stream closed while a call waited for
/// its answer leaves one, and so does a session whose process ended during a round. The next
/// agent:run answers every call left (not approved, not run, or the process ended).
fn agentPendingRound(L: State) callconv(.c) c_int {
    const a = checkOpenAgent(L, 1);
    var calls: [*c]const c.PantoPendingCall = null;
    var count: usize = 0;
    const rc = c.panto_agent_pending_round(a.handle, &calls, &count);
    if (rc < 0) raiseAgentError(L, a, rc);
    const states = [_][*:0]const u8{ "ask", "to_run", "started", "answered" };
    c.lua_createtable(L, @intCast(count), 0);
    for (0..count) |i| {
        const call = calls[i];
        c.lua_createtable(L, 0, 5);
        pushSlice(L, slice(call.id));
        c.lua_setfield(L, -2, "id");
        pushSlice(L, slice(call.name));
        c.lua_setfield(L, -2, "name");
        pushSlice(L, slice(call.input));
        c.lua_setfield(L, -2, "input_json");
        _ = c.lua_getfield(L, -1, "input_json");
        if (h.protectedCall(L, json.jsonDecode, 1, 1)) c.lua_setfield(L, -2, "input") else pop(L, 1);
        const state: usize = @intCast(call.state);
        _ = c.lua_pushstring(L, if (state < states.len) states[state] else "unknown");
        c.lua_setfield(L, -2, "state");
        c.lua_rawseti(L, -2, @intCast(i + 1));
    }
    return 1;
}

/// Calls the stream method `name` of the stream at index 4 (protected), then closes the
/// stream: returns its `nresults` results, or raises its error.
fn endTurnWith(L: State, name: [*:0]const u8, nresults: c_int) c_int {
    c.lua_settop(L, 4);
    _ = c.lua_getfield(L, 4, name);
    c.lua_pushvalue(L, 4);
    const ok = c.lua_pcallk(L, 1, nresults, 0, 0, null) == c.LUA_OK;
    _ = c.lua_getfield(L, 4, "close");
    c.lua_pushvalue(L, 4);
    c.lua_callk(L, 1, 0, 0, null);
    if (!ok) return c.lua_error(L);
    return nresults;
}

/// agent:complete(input [, options]): runs a whole turn (tool handlers included) and returns
/// its end, as stream:final_message() does: the message_complete table with `text`. Raises
/// the turn's panto.Error.
fn agentComplete(L: State) callconv(.c) c_int {
    const a = checkOpenAgent(L, 1);
    c.luaL_checkany(L, 2);
    c.lua_settop(L, 3);
    const run_tools = turnOptions(L, 3, 3, null);
    startTurn(L, a, run_tools); // 4
    return endTurnWith(L, "final_message", 1);
}

/// agent:parse(input, schema [, options]): structured output. Runs a whole turn asking for
/// JSON of `schema` (a table of parameters, as a tool's `params`; or a JSON Schema: JSON text,
/// or a table with type = "object") and returns the answer decoded, and its text. Raises a
/// panto.Error with code "output" (and the text in `output`) when the model's answer is not
/// JSON of the schema.
fn agentParse(L: State) callconv(.c) c_int {
    const a = checkOpenAgent(L, 1);
    c.luaL_checkany(L, 2);
    c.luaL_checkany(L, 3);
    c.lua_settop(L, 4);
    if (!isNoneOrNil(L, 4)) {
        c.luaL_checktype(L, 4, c.LUA_TTABLE);
        if (h.field(L, 4, "response_format") != c.LUA_TNIL) _ = c.luaL_argerror(L, 4, "parse asks for the response_format itself: leave it out");
        pop(L, 1);
    }
    c.lua_pushvalue(L, 3);
    if (!protectedCall(L, decl.schemaOf, 1, 1)) {
        if (c.lua_type(L, -1) != c.LUA_TSTRING) _ = c.lua_error(L);
        _ = c.luaL_argerror(L, 3, c.lua_tolstring(L, -1, null));
    }
    // Stack: agent, input, schema, options, schema JSON (5): the member of the options.
    _ = c.lua_pushfstring(L, "\"response_format\":{\"type\":\"json_schema\",\"schema\":%s}", c.lua_tolstring(L, 5, null));
    c.lua_replace(L, 3);
    c.lua_settop(L, 4);
    const run_tools = turnOptions(L, 4, 4, toSlice(L, 3));
    c.lua_replace(L, 3); // agent, input, options JSON
    startTurn(L, a, run_tools); // 4
    return endTurnWith(L, "final_json", 2);
}

/// Pushes a new stream userdata of the agent at index 1 (no C handle yet: see stream.push).
pub fn pushStream(L: State, run_tools: bool) *stream.Stream {
    // The turns before are over for good: their ends (final_message) are let go. Before the
    // new turn starts: freeing a stream marks its agent idle (panto's core).
    toAgent(L, 1).streams.releaseDone();
    _ = c.lua_getiuservalue(L, 1, uv_handlers);
    const s = stream.push(L, 1, -1, run_tools);
    c.lua_rotate(L, -2, 1);
    pop(L, 1); // the handlers: the stream holds them
    return s;
}

/// The stream `s` at the top gets the handle that `what` returned with `rc`: returns 1 (the
/// stream), or raises the agent's error.
pub fn attachStream(L: State, a: *Agent, s: *stream.Stream, rc: c_int, handle: ?*c.PantoStream, what: [*:0]const u8) c_int {
    if (handle) |sh| stream.attach(s, sh, &a.streams);
    if (rc < 0) {
        stream.release(s, .closed); // only if the library set it anyway
        raiseAgentError(L, a, rc);
    }
    if (handle == null) return c.luaL_error(L, "%s returned no stream", what);
    return 1;
}

/// Returns nil, message, code from the agent's last error.
fn agentFailure(L: State, a: *Agent, rc: c_int) c_int {
    var err = newError();
    const code = c.panto_agent_error(a.handle, &err);
    c.lua_pushnil(L);
    const msg = slice(err.message);
    if (msg.len > 0) pushSlice(L, msg) else _ = c.lua_pushstring(L, c.panto_status_name(rc));
    _ = c.lua_pushstring(L, c.panto_status_name(if (code != 0) code else rc));
    return 3;
}

/// agent:conversation(): the conversation so far as a JSON string (an array of
/// {"role", "content"} messages), or nil, message, code.
fn agentConversation(L: State) callconv(.c) c_int {
    const a = checkOpenAgent(L, 1);
    var out = std.mem.zeroes(c.PantoString);
    const rc = c.panto_agent_conversation(a.handle, &out);
    if (rc < 0) return agentFailure(L, a, rc);
    pushSlice(L, slice(out));
    return 1;
}

/// agent:settings(): the settings the agent holds as a table, in the keys Agent takes
/// (provider, model, base_url: where requests go, whether given or derived; system:
/// panto.null when none; max_tokens, thinking, max_tool_iterations, capabilities), never the
/// API key; or nil, message, code.
fn agentSettings(L: State) callconv(.c) c_int {
    const a = checkOpenAgent(L, 1);
    var out = std.mem.zeroes(c.PantoString);
    const rc = c.panto_agent_settings(a.handle, &out);
    if (rc < 0) return agentFailure(L, a, rc);
    pushSlice(L, slice(out));
    if (!h.protectedCall(L, json.jsonDecode, 1, 1)) return c.lua_error(L);
    return 1;
}

/// agent:model_info(): what panto knows of the agent's model as its requests see it (the
/// catalog's entry with the config's model_info over it) as a table, nil when neither knows
/// it; or nil, message, code.
fn agentModelInfo(L: State) callconv(.c) c_int {
    const a = checkOpenAgent(L, 1);
    var out = std.mem.zeroes(c.PantoString);
    const rc = c.panto_agent_model_info(a.handle, &out);
    if (rc < 0) return agentFailure(L, a, rc);
    model_info.push(L, slice(out));
    return 1;
}

/// agent:count_tokens([input]): the input tokens of the request the next turn would send
/// with `input` (what agent:run takes; nil: the conversation as it is), as a table
/// {input_tokens = N, estimated = false}: the provider's count (its token-counting endpoint),
/// or panto's estimate (estimated = true) for a provider without one (OpenAI Chat
/// Completions). Nothing is appended. Raises the panto.Error a turn's request would (code
/// "authentication", "timeout", ...), "busy" while a stream of the agent is unfinished.
fn agentCountTokens(L: State) callconv(.c) c_int {
    const a = checkOpenAgent(L, 1);
    c.lua_settop(L, 2);
    var input: c.PantoInput = undefined;
    const given: ?*const c.PantoInput = if (isNil(L, 2)) null else blk: {
        input = parts.pushInput(L, 2); // (borrows from the stack: the parts' box at 3)
        break :blk &input;
    };
    var count = std.mem.zeroes(c.PantoTokenCount);
    count.size = @sizeOf(c.PantoTokenCount);
    const rc = c.panto_agent_count_tokens(a.handle, given, &count);
    if (rc < 0) raiseAgentError(L, a, rc);
    c.lua_createtable(L, 0, 2);
    c.lua_pushinteger(L, @intCast(count.input_tokens));
    c.lua_setfield(L, -2, "input_tokens");
    c.lua_pushboolean(L, count.estimated);
    c.lua_setfield(L, -2, "estimated");
    return 1;
}

/// agent:list_models(): the models the provider lists for the account (every page), in its
/// order, as an array of tables {id = ..., display_name = ..., created = ... (RFC 3339; each
/// nil when the provider gives none), model_info = the catalog's table (as panto.model_info
/// gives it), nil when the catalog does not list the model}. Raises the panto.Error a turn's
/// request would (code "authentication", "rate_limit", ...), "busy" while a stream of the
/// agent is unfinished.
fn agentListModels(L: State) callconv(.c) c_int {
    const a = checkOpenAgent(L, 1);
    var out = std.mem.zeroes(c.PantoString);
    const rc = c.panto_agent_list_models(a.handle, &out);
    if (rc < 0) raiseAgentError(L, a, rc);
    pushSlice(L, slice(out));
    if (!h.protectedCall(L, json.jsonDecode, 1, 1)) return c.lua_error(L);
    // An unknown model's model_info is nil, as panto.model_info's is (not panto.null).
    const n = c.lua_rawlen(L, -1);
    var i: c.lua_Integer = 1;
    while (i <= n) : (i += 1) {
        _ = c.lua_rawgeti(L, -1, i);
        _ = c.lua_getfield(L, -1, "model_info");
        if (json.isNull(L, -1)) {
            c.lua_pushnil(L);
            c.lua_setfield(L, -3, "model_info");
        }
        c.lua_settop(L, -3);
    }
    return 1;
}

/// agent:connections(): what the agent's connections did so far, as a table
/// {opened = N, reused = N}: connections opened (TCP connections, and CONNECT tunnels through
/// a proxy), and requests sent on a connection kept alive from an earlier request.
fn agentConnections(L: State) callconv(.c) c_int {
    const a = checkOpenAgent(L, 1);
    var counts = std.mem.zeroes(c.PantoConnections);
    counts.size = @sizeOf(c.PantoConnections);
    const rc = c.panto_agent_connections(a.handle, &counts);
    if (rc < 0) return agentFailure(L, a, rc);
    c.lua_createtable(L, 0, 2);
    c.lua_pushinteger(L, @intCast(counts.opened));
    c.lua_setfield(L, -2, "opened");
    c.lua_pushinteger(L, @intCast(counts.reused));
    c.lua_setfield(L, -2, "reused");
    return 1;
}

/// agent:mcp_status(): each MCP server of the agent (config mcp_servers), in name order, as a
/// table {name, transport = "stdio"|"http", state = "not_started"|"ready"|"failed"|"closed",
/// protocol_version, server_name, server_version, tool_count, error, stderr_tail}.
fn agentMcpStatus(L: State) callconv(.c) c_int {
    const a = checkOpenAgent(L, 1);
    var count: usize = 0;
    var rc = c.panto_agent_mcp_count(a.handle, &count);
    if (rc < 0) return agentFailure(L, a, rc);
    c.lua_createtable(L, @intCast(count), 0);
    for (0..count) |i| {
        var st = std.mem.zeroes(c.PantoMcpStatus);
        st.size = @sizeOf(c.PantoMcpStatus);
        rc = c.panto_agent_mcp_status(a.handle, i, &st);
        if (rc < 0) return agentFailure(L, a, rc);
        c.lua_createtable(L, 0, 9);
        const states = [_][]const u8{ "not_started", "ready", "failed", "closed" };
        const state: usize = @intCast(st.state);
        h.pushSlice(L, if (state < states.len) states[state] else "unknown");
        c.lua_setfield(L, -2, "state");
        h.pushSlice(L, if (st.transport == c.PANTO_MCP_HTTP) "http" else "stdio");
        c.lua_setfield(L, -2, "transport");
        inline for (.{ "name", "protocol_version", "server_name", "server_version", "error", "stderr_tail" }) |field| {
            h.pushSlice(L, h.slice(@field(st, field)));
            c.lua_setfield(L, -2, field);
        }
        c.lua_pushinteger(L, @intCast(st.tool_count));
        c.lua_setfield(L, -2, "tool_count");
        c.lua_rawseti(L, -2, @intCast(i + 1));
    }
    return 1;
}

/// agent:set_config{...}: changes the options given (those of panto.Agent but `tools`).
/// Returns true, or nil, message, code ("config": refused, nothing changed; "busy": a stream of
/// the agent is unfinished).
fn agentSetConfig(L: State) callconv(.c) c_int {
    const a = checkOpenAgent(L, 1);
    c.luaL_checktype(L, 2, c.LUA_TTABLE);
    c.lua_settop(L, 2);
    c.lua_pushnil(L); // 3: no handlers: changes
    if (!pushConfig(L, 2, 3)) return 3;
    const rc = c.panto_agent_set_config(a.handle, h.toPantoString(L, 4));
    if (rc < 0) return agentFailure(L, a, rc);
    c.lua_pushboolean(L, 1);
    return 1;
}

/// agent:add_tool(tool): registers a tool (and its handler). Raises a panto.Error: code
/// "config" for a bad declaration or a name already taken, "busy" during a turn.
fn agentAddTool(L: State) callconv(.c) c_int {
    const a = checkOpenAgent(L, 1);
    c.luaL_checkany(L, 2);
    c.lua_settop(L, 2);
    c.lua_pushvalue(L, 2);
    if (!protectedCall(L, decl.toolSpec, 1, 3)) errors.raiseConfigError(L);
    // Stack: agent, tool, spec (3), name (4), handler (5).
    const rc = c.panto_agent_add_tool(a.handle, h.toPantoString(L, 3));
    if (rc < 0) raiseAgentError(L, a, rc);
    if (!isNil(L, 5)) {
        _ = c.lua_getiuservalue(L, 1, uv_handlers);
        c.lua_pushvalue(L, 4);
        c.lua_pushvalue(L, 5);
        c.lua_rawset(L, -3);
    }
    return 0;
}

/// agent:tools(format [, only_allowed]): the agent's tools as a JSON array in `format`
/// ("anthropic", "openai" or "panto"); raises a panto.Error for an unknown format.
fn agentTools(L: State) callconv(.c) c_int {
    const a = checkOpenAgent(L, 1);
    const format = decl.formatOf(L, 2);
    const only_allowed = optBoolean(L, 3);
    var out = std.mem.zeroes(c.PantoString);
    const rc = c.panto_agent_tools(a.handle, format, @intFromBool(only_allowed), &out);
    if (rc < 0) raiseAgentError(L, a, rc);
    pushSlice(L, slice(out));
    return 1;
}

/// agent:close(), __close and __gc: closes the agent's streams, then frees the agent and lets
/// go of the handlers. Safe to call more than once.
fn agentClose(L: State) callconv(.c) c_int {
    closeAgent(toAgent(L, 1));
    c.lua_pushnil(L);
    _ = c.lua_setiuservalue(L, 1, uv_handlers);
    return 0;
}

fn agentToString(L: State) callconv(.c) c_int {
    const a = toAgent(L, 1);
    if (a.handle) |handle|
        _ = c.lua_pushfstring(L, "panto.Agent (%p)", @as(*const anyopaque, handle))
    else
        _ = c.lua_pushstring(L, "panto.Agent (closed)");
    return 1;
}

const meta = [_]c.luaL_Reg{
    h.reg("__gc", agentClose),
    h.reg("__close", agentClose),
    h.reg("__tostring", agentToString),
    h.reg_end,
};
const methods = [_]c.luaL_Reg{
    h.reg("run", agentRun),
    h.reg("continue_turn", agentContinueTurn),
    h.reg("resume_turn", agentResumeTurn),
    h.reg("pending_round", agentPendingRound),
    h.reg("complete", agentComplete),
    h.reg("parse", agentParse),
    h.reg("conversation", agentConversation),
    h.reg("connections", agentConnections),
    h.reg("mcp_status", agentMcpStatus),
    h.reg("settings", agentSettings),
    h.reg("model_info", agentModelInfo),
    h.reg("count_tokens", agentCountTokens),
    h.reg("list_models", agentListModels),
    h.reg("add_tool", agentAddTool),
    h.reg("set_config", agentSetConfig),
    h.reg("tools", agentTools),
    h.reg("close", agentClose),
} ++ conversation.methods ++ session.methods ++ [_]c.luaL_Reg{h.reg_end};

/// The module's functions of this file.
pub const functions = [_]c.luaL_Reg{h.reg("Agent", agentNew)} ++ session.functions;

pub fn open(L: State) void {
    h.createMetatable(L, tname, &meta, &methods, null);
    session.open(L);
}
