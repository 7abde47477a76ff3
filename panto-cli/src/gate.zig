//! An extension's `tool_call` gate over the calls the core runs itself (the native `read`, the
//! MCP servers' tools): those never reach the command before they run, except as an approval.
//! So when an extension subscribes to `tool_call` at start, an approval rule after the
//! leading denies makes every call ask (`prepend`), and `filter` answers each call of the request: by the rules as they
//! were (App.ungated_rules: deny, allow or ask), and for a call the core runs, by the gate
//! first. Only the calls a person must answer stay in the request. The command's own (Lua)
//! tools are gated when they start (turn.zig), where their input can be rewritten too.
const std = @import("std");
const panto = @import("panto");
const App = @import("app.zig").App;
const turn = @import("turn.zig");
const RawJson = @import("json_events.zig").RawJson;

const Rule = panto.approval.Rule;
const ApprovalCall = panto.event.ApprovalCall;

/// `rules` with a rule that makes every call ask after their leading `deny` rules (the
/// permissions' denies: the core answers those itself, with its own words).
pub fn prepend(arena: std.mem.Allocator, rules: []const Rule) error{OutOfMemory}![]const Rule {
    var denies: usize = 0;
    while (denies < rules.len and rules[denies].decision == .deny) denies += 1;
    const out = try arena.alloc(Rule, rules.len + 1);
    @memcpy(out[0..denies], rules[0..denies]);
    out[denies] = .{ .tool = "*", .decision = .ask };
    @memcpy(out[denies + 1 ..], rules[denies..]);
    return out;
}

/// Answers the calls that only the gate's rule made ask; appends to `asked` those that ask by
/// the rules as they were (a call the core runs that the gate blocked is denied unasked).
pub fn filter(app: *App, stream: *panto.Stream, calls: []const ApprovalCall, asked: *std.ArrayList(ApprovalCall)) void {
    const rules = app.ungated_rules.?;
    for (calls) |c| {
        const id = c.id.slice();
        const name = c.name.slice();
        const input = c.input.slice();
        const declared: panto.approval.ToolApproval = if (app.agent.findTool(name)) |t| t.approval else .never;
        const parsed = std.json.parseFromSlice(std.json.Value, app.gpa, input, .{}) catch null;
        defer if (parsed) |p| p.deinit();
        const verdict = panto.approval.decide(rules, declared, name, if (parsed) |p| p.value else .null);
        if (verdict.decision == .deny) {
            stream.deny(id, verdict.reason orelse "the approval rules do not allow this call") catch {};
            continue;
        }
        if (!app.host.hasTool(name)) {
            // The core runs it: the gate now, its only chance.
            remember(app, id);
            switch (turn.emitGated(app, "tool_call", .{ .id = id, .name = name, .input = RawJson{ .text = input } }, true)) {
                .block => |reason| {
                    var buf: [1024]u8 = undefined;
                    stream.deny(id, turn.blockedText(&buf, reason)) catch {};
                    continue;
                },
                .rewrite => {
                    app.host.reportLine("ext.on('tool_call'): a {s} call runs in the core, its input cannot be changed: it is blocked", .{name});
                    stream.deny(id, "An extension asked to change this call's input, which panto cannot do for this tool") catch {};
                    continue;
                },
                .pass => {},
            }
        }
        if (verdict.decision == .ask) {
            asked.append(app.gpa, c) catch stream.deny(id, "out of memory") catch {};
        } else stream.approve(id) catch {};
    }
}

/// The call `id` was gated at its approval (App.gated_ids).
fn remember(app: *App, id: []const u8) void {
    const copy = app.gpa.dupe(u8, id) catch return;
    app.gated_ids.append(app.gpa, copy) catch app.gpa.free(copy);
}

/// Whether the call `id` was gated at its approval; forgotten once asked.
pub fn wasGated(app: *App, id: []const u8) bool {
    for (app.gated_ids.items, 0..) |g, i| if (std.mem.eql(u8, g, id)) {
        app.gpa.free(app.gated_ids.swapRemove(i));
        return true;
    };
    return false;
}

test "prepend: an ask-all rule after the leading denies" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    const given = [_]Rule{ .{ .tool = "bash", .decision = .deny }, .{ .tool = "read", .decision = .allow }, .{ .tool = "x", .decision = .deny } };
    const out = try prepend(arena.allocator(), &given);
    const want = [_]struct { []const u8, panto.approval.Decision }{ .{ "bash", .deny }, .{ "*", .ask }, .{ "read", .allow }, .{ "x", .deny } };
    try std.testing.expectEqual(want.len, out.len);
    for (want, out) |w, o| {
        try std.testing.expectEqualStrings(w[0], o.tool);
        try std.testing.expectEqual(w[1], o.decision);
    }
}
