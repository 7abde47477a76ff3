//! A tool round left waiting for a person (issue 36, docs/design/approvals-and-steering.md,
//! decision 3): the calls of the conversation's last message, which is the assistant's, and
//! where each one is. A stream closed or canceled while a call waits for its answer leaves
//! the agent holding one (suspended); a session records one at each change of the round
//! (entry `pending_round`), so another process that opens the session is in the same state,
//! also after a SIGKILL. `Agent.resumeTurn` goes on with the round; a new `run` first
//! answers what is left (`settle`), so a request never carries a call without its result.
const std = @import("std");
const Allocator = std.mem.Allocator;
const conversation = @import("../conversation.zig");
const Message = conversation.Message;
const Block = conversation.Block;
const ev = @import("../event.zig");

pub const State = enum(i32) {
    /// Waits for a person's answer (approve or deny).
    ask = 0,
    /// Has its answer (or needed none) and was not handed to its runner yet: it runs when
    /// the turn is resumed.
    to_run = 1,
    /// Was handed to its runner (its ToolCallStart went out) and no result was recorded: the
    /// process ended, or may have, while it ran. It is not run again: whether its effects
    /// happened is not panto's to know.
    started = 2,
    /// Has its result (it ran, was denied, or panto answered it).
    answered = 3,
};

/// Laid out as `PantoPendingCall` (include/panto.h): the C ABI hands out the array as it is.
pub const View = extern struct { id: ev.Bytes, name: ev.Bytes, input: ev.Bytes, state: State, reserved: i32 = 0 };

/// What a call not answered gets when the user moves on instead of resuming the turn.
pub fn settleText(state: State) []const u8 {
    return switch (state) {
        .ask => "The user did not approve this call before moving on.",
        .to_run => "The call was not run: the user moved on before it started.",
        .started, .answered => ended_text,
    };
}

/// A call whose ToolCallStart went out and whose result was never recorded.
pub const ended_text = "The process ended before this call finished.";

pub const Call = struct { id: []u8, state: State };

pub const PendingRound = struct {
    /// In the order of the message's calls.
    calls: []Call,
    /// The answered calls' results: tool_result blocks (a user message of them).
    results: ?Message,
    /// How many messages the conversation had (its last, the round's assistant message):
    /// an edit of the conversation since makes the round no longer the agent's.
    message_count: usize,
    /// The calls as `View`s (for the C ABI), with the message's strings: made by `views`.
    view_list: std.ArrayList(View) = .empty,

    pub fn deinit(p: *PendingRound, gpa: Allocator) void {
        for (p.calls) |c| gpa.free(c.id);
        gpa.free(p.calls);
        if (p.results) |m| conversation.freeMessage(gpa, m);
        p.view_list.deinit(gpa);
    }

    pub fn stateOf(p: *const PendingRound, id: []const u8) ?State {
        return stateIn(p.calls, id);
    }

    pub fn resultOf(p: *const PendingRound, id: []const u8) ?*const Block {
        return resultIn(p.results, id);
    }

    /// Still the round of `conv`: nothing was appended or taken away since.
    pub fn fits(p: *const PendingRound, conv: *const conversation.Conversation) bool {
        const messages = conv.messages.items;
        if (messages.len != p.message_count or messages.len == 0 or p.calls.len == 0) return false;
        const last = &messages[messages.len - 1];
        return last.role == .assistant and callBlock(last, p.calls[0].id) != null;
    }

    /// The calls with their names and inputs from the round's message (`last`), valid until
    /// the round or the conversation changes.
    pub fn views(p: *PendingRound, gpa: Allocator, last: *const Message) Allocator.Error![]const View {
        p.view_list.clearRetainingCapacity();
        try p.view_list.ensureTotalCapacity(gpa, p.calls.len);
        for (p.calls) |c| {
            const b = callBlock(last, c.id) orelse continue;
            p.view_list.appendAssumeCapacity(.{ .id = .of(c.id), .name = .of(b.name), .input = .of(b.text), .state = c.state });
        }
        return p.view_list.items;
    }

    /// The user message that answers every call of the round (`last`), in call order: the
    /// results it has, and for the others `settleText` as an error. The caller owns it.
    pub fn settle(p: *const PendingRound, gpa: Allocator, last: *const Message) Allocator.Error![]Block {
        var blocks: std.ArrayList(Block) = .empty;
        errdefer {
            for (blocks.items) |b| conversation.freeBlock(gpa, b);
            blocks.deinit(gpa);
        }
        for (last.blocks) |b| {
            if (b.kind != .tool_call) continue;
            try blocks.ensureUnusedCapacity(gpa, 1);
            const state = p.stateOf(b.id) orelse .started;
            if (state == .answered) if (p.resultOf(b.id)) |r| {
                blocks.appendAssumeCapacity(try conversation.copyBlock(gpa, r.*));
                continue;
            };
            const answer: Block = .{ .kind = .tool_result, .id = b.id, .text = settleText(state), .is_error = true };
            blocks.appendAssumeCapacity(try conversation.copyBlock(gpa, answer));
        }
        return blocks.toOwnedSlice(gpa);
    }
};

/// The state of call `id` among `calls` (anything with `id` and `state`).
fn stateIn(calls: anytype, id: []const u8) ?State {
    for (calls) |c| if (std.mem.eql(u8, c.id, id)) return c.state;
    return null;
}

/// The tool_result block for call `id` of the message of results `results`.
fn resultIn(results: ?Message, id: []const u8) ?*const Block {
    const m = results orelse return null;
    for (m.blocks) |*b| if (b.kind == .tool_result and std.mem.eql(u8, b.id, id)) return b;
    return null;
}

/// The tool_call block of `m` whose id is `id`.
pub fn callBlock(m: *const Message, id: []const u8) ?*const Block {
    for (m.blocks) |*b| if (b.kind == .tool_call and std.mem.eql(u8, b.id, id)) return b;
    return null;
}

/// Whether `m` is an assistant message with tool calls (a round's).
pub fn hasCalls(m: *const Message) bool {
    if (m.role != .assistant) return false;
    for (m.blocks) |b| if (b.kind == .tool_call) return true;
    return false;
}

/// The pending round of a conversation loaded from a session: its last message is the
/// assistant's with tool calls, the calls' results never written. `recorded` is the last
/// `pending_round` entry that belongs to it (replay.zig), or null: the process ended during a
/// round that asked nothing, or before the entry was written; every call is then `started`.
/// An entry that does not parse counts as none. null when the conversation has no open round.
pub fn fromSession(gpa: Allocator, conv: *const conversation.Conversation, recorded: ?Recorded) Allocator.Error!?PendingRound {
    const messages = conv.messages.items;
    if (messages.len == 0 or !hasCalls(&messages[messages.len - 1])) return null;
    const last = &messages[messages.len - 1];
    var parsed: ?Parsed = if (recorded) |r| parseRecorded(gpa, r) catch |err| switch (err) {
        error.OutOfMemory => return error.OutOfMemory,
        error.Invalid => null,
    } else null;
    defer if (parsed) |*pr| pr.deinit(gpa);

    var calls: std.ArrayList(Call) = .empty;
    errdefer {
        for (calls.items) |c| gpa.free(c.id);
        calls.deinit(gpa);
    }
    for (last.blocks) |b| {
        if (b.kind != .tool_call) continue;
        try calls.ensureUnusedCapacity(gpa, 1);
        var state: State = if (parsed) |*pr| pr.stateOf(b.id) orelse .started else .started;
        // An answer without its result is no answer.
        if (state == .answered and (parsed == null or parsed.?.resultOf(b.id) == null)) state = .started;
        calls.appendAssumeCapacity(.{ .id = try gpa.dupe(u8, b.id), .state = state });
    }
    var results: ?Message = null;
    if (parsed) |*pr| {
        results = pr.results;
        pr.results = null; // (taken)
    }
    return .{ .calls = try calls.toOwnedSlice(gpa), .results = results, .message_count = messages.len };
}

/// A `pending_round` entry's fields as JSON text (replay.zig keeps the last one).
pub const Recorded = struct { calls: []const u8, results: ?[]const u8 };

const RecordedCall = struct { id: []const u8, state: State };

const Parsed = struct {
    states: std.json.Parsed([]const RecordedCall),
    results: ?Message,

    fn deinit(p: *Parsed, gpa: Allocator) void {
        p.states.deinit();
        if (p.results) |m| conversation.freeMessage(gpa, m);
    }

    fn stateOf(p: *const Parsed, id: []const u8) ?State {
        return stateIn(p.states.value, id);
    }

    fn resultOf(p: *const Parsed, id: []const u8) ?*const Block {
        return resultIn(p.results, id);
    }
};

fn parseRecorded(gpa: Allocator, r: Recorded) (Allocator.Error || error{Invalid})!Parsed {
    const states = std.json.parseFromSlice([]const RecordedCall, gpa, r.calls, .{}) catch |err| return switch (err) {
        error.OutOfMemory => error.OutOfMemory,
        else => error.Invalid,
    };
    errdefer states.deinit();
    var results: ?Message = null;
    if (r.results) |raw| {
        var diag: @import("../conversation_json.zig").Diagnostic = .{};
        results = @import("../conversation_json.zig").parseMessageJson(gpa, raw, &diag) catch |err| return switch (err) {
            error.OutOfMemory => error.OutOfMemory,
            error.InvalidConversation => error.Invalid,
        };
    }
    return .{ .states = states, .results = results };
}

test "a session's round: the recorded states, a call the entry does not name counted started" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try conv.appendUserText("go");
    try conv.appendCopy(.assistant, &.{
        .{ .kind = .tool_call, .id = "a", .name = "bash", .text = "{\"command\":\"rm x\"}" },
        .{ .kind = .tool_call, .id = "b", .name = "ls", .text = "{}" },
        .{ .kind = .tool_call, .id = "c", .name = "ls", .text = "{}" },
        .{ .kind = .tool_call, .id = "d", .name = "ls", .text = "{}" },
    });
    var p = (try fromSession(gpa, &conv, .{
        .calls = "[{\"id\":\"a\",\"state\":\"ask\"},{\"id\":\"b\",\"state\":\"answered\"},{\"id\":\"c\",\"state\":\"answered\"}]",
        .results = "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"id\":\"b\",\"content\":\"x.txt\",\"is_error\":false}]}",
    })).?;
    defer p.deinit(gpa);
    try std.testing.expectEqual(State.ask, p.calls[0].state);
    try std.testing.expectEqual(State.answered, p.calls[1].state);
    try std.testing.expectEqual(State.started, p.calls[2].state); // (no result recorded)
    try std.testing.expectEqual(State.started, p.calls[3].state);
    try std.testing.expect(p.fits(&conv));

    const views = try p.views(gpa, &conv.messages.items[1]);
    try std.testing.expectEqualStrings("bash", views[0].name.slice());
    try std.testing.expectEqualStrings("{\"command\":\"rm x\"}", views[0].input.slice());

    const blocks = try p.settle(gpa, &conv.messages.items[1]);
    defer conversation.freeBlocks(gpa, blocks);
    try std.testing.expectEqual(@as(usize, 4), blocks.len);
    try std.testing.expectEqualStrings(settleText(.ask), blocks[0].text);
    try std.testing.expectEqualStrings("x.txt", blocks[1].text);
    try std.testing.expect(!blocks[1].is_error);
    try std.testing.expectEqualStrings(ended_text, blocks[2].text);
    try std.testing.expect(blocks[3].is_error);

    try conv.appendUserText("more");
    try std.testing.expect(!p.fits(&conv));
}

test "no round: a conversation that ends with a user message or an answer without calls" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try std.testing.expectEqual(null, try fromSession(gpa, &conv, null));
    try conv.appendUserText("go");
    try std.testing.expectEqual(null, try fromSession(gpa, &conv, null));
    try conv.appendCopy(.assistant, &.{.{ .kind = .text, .text = "hi" }});
    try std.testing.expectEqual(null, try fromSession(gpa, &conv, null));
}

test "an entry that does not parse counts as none: every call started" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try conv.appendUserText("go");
    try conv.appendCopy(.assistant, &.{.{ .kind = .tool_call, .id = "a", .name = "t", .text = "{}" }});
    var p = (try fromSession(gpa, &conv, .{ .calls = "[{\"id\":\"a\",\"state\":\"maybe\"}]", .results = null })).?;
    defer p.deinit(gpa);
    try std.testing.expectEqual(State.started, p.calls[0].state);
}
