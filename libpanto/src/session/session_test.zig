//! Sessions through the agent: a conversation written as it happens and resumed by the next
//! agent, the lock, torn and corrupt files, every kind of entry, forks and listing.
const std = @import("std");
const Agent = @import("../agent.zig").Agent;
const config_mod = @import("../config.zig");
const conversation = @import("../conversation.zig");
const Conversation = conversation.Conversation;
const stream_test = @import("../stream_test.zig");
const session = @import("session.zig");
const dir_mod = @import("dir.zig");

const gpa = std.testing.allocator;
const secret_key = "sk-ant-SECRET-0123456789";

/// A temporary session directory and the config of agents kept in it.
const Fixture = struct {
    tmp: std.testing.TmpDir,
    dir_buf: [std.c.PATH_MAX]u8 = undefined,
    dir: []const u8 = "",
    url_buf: [64]u8 = undefined,
    url: []const u8 = "http://127.0.0.1:9",

    fn init(f: *Fixture) !void {
        f.* = .{ .tmp = std.testing.tmpDir(.{}) };
        const base = try dir_mod.tmpPath(&f.tmp, &f.dir_buf);
        f.dir = base;
    }

    fn deinit(f: *Fixture) void {
        f.tmp.cleanup();
    }

    fn config(f: *const Fixture, id: ?[]const u8, mode: config_mod.Session.Mode) config_mod.Config {
        return .{ .provider = .anthropic, .model = "claude-test", .api_key = secret_key, .base_url = f.url, .session = .{ .dir = f.dir, .id = id, .mode = mode } };
    }

    fn agent(f: *const Fixture, id: ?[]const u8, mode: config_mod.Session.Mode) !*Agent {
        var diag: config_mod.Diagnostic = .{};
        return Agent.initWithDiagnostic(gpa, f.config(id, mode), &diag) catch |err| {
            std.debug.print("agent: {s}: {s}\n", .{ @errorName(err), diag.message() });
            return err;
        };
    }

    /// The session file's bytes.
    fn read(f: *const Fixture, id: []const u8) ![]u8 {
        var name: [160]u8 = undefined;
        return f.tmp.dir.readFileAlloc(std.testing.io, try std.fmt.bufPrint(&name, "{s}.jsonl", .{id}), gpa, .unlimited);
    }
};

/// The conversation as JSON, to compare two.
fn dump(c: *const Conversation) ![]u8 {
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    try c.writeJson(&out.writer);
    return out.toOwnedSlice();
}

fn expectSameConversation(expected: *const Conversation, actual: *const Conversation) !void {
    const a = try dump(expected);
    defer gpa.free(a);
    const b = try dump(actual);
    defer gpa.free(b);
    try std.testing.expectEqualStrings(a, b);
}

/// Runs one turn against a test server answering `sse_body`.
fn runTurn(agent: *Agent, text: []const u8) !void {
    var server: stream_test.TestServer = undefined;
    try server.start(.{});
    defer server.stop();
    var url_buf: [64]u8 = undefined;
    var diag: config_mod.Diagnostic = .{};
    var patch_buf: [128]u8 = undefined;
    try agent.setConfig(try std.fmt.bufPrint(&patch_buf, "{{\"base_url\":\"{s}\"}}", .{try std.fmt.bufPrint(&url_buf, "http://127.0.0.1:{d}", .{server.port})}), &diag);
    const stream = try agent.run(text);
    defer stream.destroy();
    while (try stream.next()) |_| {}
}

test "an agent with a session writes its conversation as it goes; the next agent resumes it" {
    var f: Fixture = undefined;
    try f.init();
    defer f.deinit();
    const first = try f.agent("s1", .open);
    try runTurn(first, "hello");
    try std.testing.expectEqual(@as(usize, 2), first.conversation.messages.items.len);
    const info = first.sessionInfo().?;
    try std.testing.expectEqualStrings("s1", info.id);
    try std.testing.expect(!info.resumed);
    // Freed without closing anything first: the file is already complete.
    var kept: Conversation = .init(gpa);
    defer kept.deinit();
    for (first.conversation.messages.items) |m| try kept.appendMessage(m.role, m.blocks, .{ .stop_reason = m.stop_reason, .provider = m.provider, .model = m.model, .usage = m.usage });
    first.deinit();

    const second = try f.agent("s1", .@"resume");
    defer second.deinit();
    try std.testing.expect(second.sessionInfo().?.resumed);
    try std.testing.expectEqual(@as(u64, 0), second.sessionInfo().?.torn_bytes);
    try expectSameConversation(&kept, &second.conversation);
    try runTurn(second, "again");
    try std.testing.expectEqual(@as(usize, 4), second.conversation.messages.items.len);

    const bytes = try f.read("s1");
    defer gpa.free(bytes);
    // Never a secret, nor where requests go.
    try std.testing.expect(std.mem.indexOf(u8, bytes, "SECRET") == null);
    try std.testing.expect(std.mem.indexOf(u8, bytes, "api_key") == null);
    try std.testing.expect(std.mem.indexOf(u8, bytes, "127.0.0.1") == null);
    try std.testing.expect(std.mem.startsWith(u8, bytes, "{\"type\":\"session\",\"version\":1,\"id\":\"s1\",\"created\":\""));
    try std.testing.expect(std.mem.indexOf(u8, bytes, "{\"type\":\"config\",\"config\":{\"provider\":\"anthropic\",\"model\":\"claude-test\",\"system\":null,\"thinking\":\"off\",\"max_tokens\":4096}}\n") != null);
}

test "a second agent on a session another agent holds is refused; once freed, it opens" {
    var f: Fixture = undefined;
    try f.init();
    defer f.deinit();
    const first = try f.agent("locked", .create);
    var diag: config_mod.Diagnostic = .{};
    try std.testing.expectError(error.SessionLocked, Agent.initWithDiagnostic(gpa, f.config("locked", .open), &diag));
    try std.testing.expectEqualStrings("session locked is open in another agent", diag.message());
    // The refused agent wrote nothing: the holder's file is as it was.
    const before = try f.read("locked");
    defer gpa.free(before);
    try std.testing.expectEqual(@as(usize, 1), std.mem.count(u8, before, "\"type\":\"session\""));
    first.deinit();
    const second = try f.agent("locked", .open);
    defer second.deinit();
    try std.testing.expect(second.sessionInfo().?.resumed);
}

test "modes: resume needs the session, create refuses an existing one, open makes or resumes" {
    var f: Fixture = undefined;
    try f.init();
    defer f.deinit();
    var diag: config_mod.Diagnostic = .{};
    try std.testing.expectError(error.NoSuchSession, Agent.initWithDiagnostic(gpa, f.config("nope", .@"resume"), &diag));
    try std.testing.expect(std.mem.startsWith(u8, diag.message(), "no session nope in "));
    (try f.agent("made", .create)).deinit();
    try std.testing.expectError(error.SessionExists, Agent.initWithDiagnostic(gpa, f.config("made", .create), &diag));
    const a = try f.agent(null, .open); // a new id
    defer a.deinit();
    try std.testing.expect(session.id.isValid(a.sessionInfo().?.id));
    try std.testing.expectEqual(@as(usize, session.id.made_len), a.sessionInfo().?.id.len);
}

/// Appends raw bytes to a session file, as a crash mid-write would leave them.
fn appendRaw(f: *const Fixture, id: []const u8, bytes: []const u8) !void {
    var name: [160]u8 = undefined;
    var file = try f.tmp.dir.openFile(std.testing.io, try std.fmt.bufPrint(&name, "{s}.jsonl", .{id}), .{ .mode = .write_only });
    defer file.close(std.testing.io);
    const end = try file.length(std.testing.io);
    try file.writePositionalAll(std.testing.io, bytes, end);
}

test "a torn last line is cut off the file and counted; the session goes on after it" {
    var f: Fixture = undefined;
    try f.init();
    defer f.deinit();
    const first = try f.agent("torn", .create);
    try first.conversation.appendUserText("kept");
    first.deinit();
    const whole = try f.read("torn");
    defer gpa.free(whole);
    for ([_][]const u8{ "{\"type\":\"message\",\"mess", "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"lost\"}]}}", "garbage\n" }) |torn| {
        try appendRaw(&f, "torn", torn);
        const a = try f.agent("torn", .@"resume");
        try std.testing.expectEqual(@as(u64, torn.len), a.sessionInfo().?.torn_bytes);
        try std.testing.expectEqual(@as(usize, 1), a.conversation.messages.items.len);
        try std.testing.expectEqualStrings("kept", a.conversation.messages.items[0].blocks[0].text);
        a.deinit();
        const after = try f.read("torn");
        defer gpa.free(after);
        try std.testing.expectEqualStrings(whole, after); // cut back to the whole entries
    }
    // Appending after a cut: the next agent reads it all, nothing torn.
    const b = try f.agent("torn", .@"resume");
    try b.conversation.appendUserText("next");
    b.deinit();
    const c = try f.agent("torn", .@"resume");
    defer c.deinit();
    try std.testing.expectEqual(@as(u64, 0), c.sessionInfo().?.torn_bytes);
    try std.testing.expectEqual(@as(usize, 2), c.conversation.messages.items.len);
}

test "a line that is not an entry in the middle of the file is an error naming it; the file is left as it is" {
    var f: Fixture = undefined;
    try f.init();
    defer f.deinit();
    const first = try f.agent("bad", .create);
    first.deinit();
    try appendRaw(&f, "bad", "not json\n");
    const before = try f.read("bad");
    defer gpa.free(before);
    {
        const a = try f.agent("bad", .open);
        try a.conversation.appendUserText("after");
        a.deinit();
    }
    // ("not json" was the last line: torn, cut. Now put it in the middle.)
    try appendRaw(&f, "bad", "not json\n{\"type\":\"truncate\",\"message_count\":0}\n");
    const kept = try f.read("bad");
    defer gpa.free(kept);
    var diag: config_mod.Diagnostic = .{};
    try std.testing.expectError(error.SessionCorrupt, Agent.initWithDiagnostic(gpa, f.config("bad", .open), &diag));
    try std.testing.expectEqualStrings("line 4 is not a session entry", diag.message());
    const after = try f.read("bad");
    defer gpa.free(after);
    try std.testing.expectEqualStrings(kept, after);
    // An entry that does not fit the conversation is named too.
    var g: Fixture = undefined;
    try g.init();
    defer g.deinit();
    (try g.agent("t", .create)).deinit();
    try appendRaw(&g, "t", "{\"type\":\"truncate\",\"message_count\":3}\n{\"type\":\"truncate\",\"message_count\":0}\n");
    try std.testing.expectError(error.SessionCorrupt, Agent.initWithDiagnostic(gpa, g.config("t", .open), &diag));
    try std.testing.expectEqualStrings("line 3 truncates to more messages than there are", diag.message());
}

test "every kind of entry replays: a resume after each gives the conversation in memory; nothing is rewritten in place" {
    var f: Fixture = undefined;
    try f.init();
    defer f.deinit();
    const a = try f.agent("kinds", .create);
    defer a.deinit();
    var previous = try f.read("kinds");
    defer gpa.free(previous);
    var diag: config_mod.Diagnostic = .{};
    const steps = 9;
    for (0..steps) |step| {
        const conv = &a.conversation;
        switch (step) {
            0 => try conv.appendOwnedMessage(.{ .role = .user, .blocks = try conversation.copyBlocks(gpa, &.{.{ .kind = .text, .text = "one" }}), .cache = true }),
            1 => try conv.appendMessage(.assistant, &.{
                .{ .kind = .thinking, .text = "hm", .signature = "sig" },
                .{ .kind = .tool_call, .id = "c1", .name = "look", .text = "{\"q\":1}" },
            }, .{ .stop_reason = .tool_use, .provider = "anthropic", .model = "claude-test", .usage = .{ .input_tokens = 3 } }),
            2 => try conv.appendCopy(.user, &.{.{ .kind = .tool_result, .id = "c1", .text = "seen", .is_error = true }}),
            3 => try conv.appendMessage(.assistant, &.{.{ .kind = .text, .text = "done" }}, .{ .stop_reason = .end_turn, .provider = "anthropic", .model = "claude-test", .usage = .{ .input_tokens = 3 } }),
            4 => try conv.dropLast(),
            5 => try a.setConfig("{\"model\":\"claude-other\",\"system\":\"be brief\",\"max_tokens\":99}", &diag),
            6 => { // a compaction: [summary] + live[2..]
                const summary: conversation.Message = .{ .role = .user, .blocks = try conversation.copyBlocks(gpa, &.{.{ .kind = .text, .text = "summary" }}), .compaction = .{ .message_count = 2, .tokens_before = 10 } };
                try conv.replacePrefix(2, summary, 3);
            },
            7 => { // an import
                var other: Conversation = .init(gpa);
                defer other.deinit();
                try other.appendOwnedMessage(.{ .role = .user, .blocks = try conversation.copyBlocks(gpa, &.{.{ .kind = .text, .text = "imported" }}), .cache = true });
                try other.appendMessage(.assistant, &.{.{ .kind = .text, .text = "yes" }}, .{ .stop_reason = .end_turn, .provider = "anthropic", .model = "claude-test", .usage = .{ .input_tokens = 3 } });
                try conv.journal.?.replace(other.messages.items);
                for (conv.messages.items) |m| conversation.freeMessage(gpa, m);
                conv.messages.clearRetainingCapacity();
                for (other.messages.items) |m| try conv.messages.append(gpa, .{ .role = m.role, .blocks = try conversation.copyBlocks(gpa, m.blocks), .stop_reason = m.stop_reason, .provider = try gpa.dupe(u8, m.provider), .model = try gpa.dupe(u8, m.model), .usage = m.usage, .cache = m.cache });
            },
            8 => try a.setConfig("{\"thinking\":\"low\",\"api_key\":\"sk-ant-OTHER-SECRET\",\"base_url\":\"http://elsewhere:1\"}", &diag),
            else => unreachable,
        }
        const now = try f.read("kinds");
        // Appended only: what was there is still there, byte for byte.
        try std.testing.expect(now.len > previous.len);
        try std.testing.expectEqualStrings(previous, now[0..previous.len]);
        try std.testing.expectEqual(@as(u8, '\n'), now[now.len - 1]);
        try std.testing.expectEqual(@as(usize, 1), std.mem.count(u8, now[previous.len..], "\n")); // one entry
        gpa.free(previous);
        previous = now;
        // What a resume reads (a copy of the file: the agent holds the lock).
        try expectReplaysTo(&f, now, conv);
    }
    try std.testing.expect(std.mem.indexOf(u8, previous, "SECRET") == null);
    try std.testing.expect(std.mem.indexOf(u8, previous, "elsewhere") == null);
    // The caller's cache marks are kept (and replayed: expectReplaysTo compares them too).
    try std.testing.expectEqual(@as(usize, 2), std.mem.count(u8, previous, "\"content\":[{\"type\":\"text\",\"text\":\"one\"}],\"cache\":true}") + std.mem.count(u8, previous, "\"text\":\"imported\"}],\"cache\":true}"));
    try std.testing.expect(std.mem.indexOf(u8, previous, "{\"type\":\"config\",\"config\":{\"model\":\"claude-other\",\"system\":\"be brief\",\"max_tokens\":99}}\n") != null);
    try std.testing.expect(std.mem.endsWith(u8, previous, "{\"type\":\"config\",\"config\":{\"thinking\":\"low\"}}\n"));
    try std.testing.expect(std.mem.indexOf(u8, previous, "\"compaction\":{\"message_count\":2,\"tokens_before\":10}},\"first_kept\":2,\"tokens_before\":10,\"tokens_after\":3}\n") != null);
}

/// Writes `bytes` as another session and opens it: its conversation must be `expected`.
fn expectReplaysTo(f: *Fixture, bytes: []const u8, expected: *const Conversation) !void {
    try f.tmp.dir.writeFile(std.testing.io, .{ .sub_path = "copy.jsonl", .data = bytes });
    const b = try f.agent("copy", .@"resume");
    defer b.deinit();
    try expectSameConversation(expected, &b.conversation);
    try f.tmp.dir.deleteFile(std.testing.io, "copy.jsonl");
}

test "a fork is a new session naming its parent, with the first k messages; the agent goes on in it, the parent is unchanged" {
    var f: Fixture = undefined;
    try f.init();
    defer f.deinit();
    const a = try f.agent("parent", .create);
    defer a.deinit();
    try a.conversation.appendUserText("one");
    try a.conversation.appendMessage(.assistant, &.{.{ .kind = .tool_call, .id = "c", .name = "t", .text = "{}" }}, .{ .stop_reason = .tool_use, .provider = "anthropic", .model = "claude-test", .usage = .{ .input_tokens = 3 } });
    try a.conversation.appendCopy(.user, &.{.{ .kind = .tool_result, .id = "c", .text = "r" }});
    const parent_before = try f.read("parent");
    defer gpa.free(parent_before);
    var diag: config_mod.Diagnostic = .{};
    // Refused, nothing changed: past the end, tool calls without their results, a taken id.
    try std.testing.expectError(error.InvalidArgument, a.forkSession(4, "child", &diag));
    try std.testing.expectError(error.InvalidConversation, a.forkSession(2, "child", &diag));
    try std.testing.expectError(error.SessionExists, a.forkSession(1, "parent", &diag));
    try std.testing.expectError(error.SessionWrite, a.forkSession(1, "../x", &diag));
    try std.testing.expectEqual(@as(usize, 3), a.conversation.messages.items.len);
    try std.testing.expectEqualStrings("parent", a.sessionInfo().?.id);

    try a.forkSession(1, "child", &diag);
    try std.testing.expectEqualStrings("child", a.sessionInfo().?.id);
    try std.testing.expectEqual(@as(usize, 1), a.conversation.messages.items.len);
    try a.conversation.appendUserText("two");
    const parent_after = try f.read("parent");
    defer gpa.free(parent_after);
    try std.testing.expectEqualStrings(parent_before, parent_after);
    // The parent is free again; the child holds what the agent has.
    const p = try f.agent("parent", .@"resume");
    try std.testing.expectEqual(@as(usize, 3), p.conversation.messages.items.len);
    p.deinit();
    const child = try f.read("child");
    defer gpa.free(child);
    try std.testing.expect(std.mem.indexOf(u8, child, "\"parent\":{\"id\":\"parent\",\"message_count\":1}}\n") != null);
    try expectReplaysTo(&f, child, &a.conversation);
}

test "list: the sessions of a directory, newest first, with their counts, first user text and parent" {
    var f: Fixture = undefined;
    try f.init();
    defer f.deinit();
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    var diag: config_mod.Diagnostic = .{};
    var missing_buf: [std.c.PATH_MAX]u8 = undefined;
    try std.testing.expectEqual(@as(usize, 0), (try session.list(gpa, arena.allocator(), try std.fmt.bufPrint(&missing_buf, "{s}/none", .{f.dir}), &diag)).len);
    {
        const a = try f.agent("older", .create);
        defer a.deinit();
        try a.conversation.appendUserText("first question");
        try a.conversation.appendMessage(.assistant, &.{.{ .kind = .text, .text = "answer" }}, .{ .stop_reason = .end_turn, .provider = "anthropic", .model = "claude-test", .usage = .{ .input_tokens = 3 } });
        try a.forkSession(1, "newer", &diag);
    }
    try f.tmp.dir.writeFile(std.testing.io, .{ .sub_path = "notes.jsonl", .data = "{\"hello\":1}\n" });
    try f.tmp.dir.writeFile(std.testing.io, .{ .sub_path = "other.txt", .data = "x" });
    // Make "older" older on disk (mtimes may tie within a test).
    var older_path: [std.c.PATH_MAX:0]u8 = undefined;
    const older_z = try std.fmt.bufPrintZ(&older_path, "{s}/older.jsonl", .{f.dir});
    const times = [2]std.c.timespec{ .{ .sec = 1_000_000_000, .nsec = 0 }, .{ .sec = 1_000_000_000, .nsec = 0 } };
    try std.testing.expectEqual(@as(c_int, 0), std.c.utimensat(std.c.AT.FDCWD, older_z, &times, 0));
    const held = try f.agent("newer", .@"resume"); // a held session is listed
    defer held.deinit();
    const listed = try session.list(gpa, arena.allocator(), f.dir, &diag);
    try std.testing.expectEqual(@as(usize, 2), listed.len);
    try std.testing.expectEqualStrings("newer", listed[0].id);
    try std.testing.expectEqual(@as(usize, 1), listed[0].message_count);
    try std.testing.expectEqualStrings("first question", listed[0].first_user_text);
    try std.testing.expectEqualStrings("older", listed[0].parent.?.id);
    try std.testing.expectEqualStrings("older", listed[1].id);
    try std.testing.expectEqual(@as(usize, 2), listed[1].message_count);
    try std.testing.expectEqual(null, listed[1].parent);
    // The configuration each recorded last, for a resume to go on with.
    try std.testing.expectEqualStrings("anthropic", listed[1].config.provider.?);
    try std.testing.expectEqualStrings("claude-test", listed[1].config.model.?);
    try std.testing.expectEqualStrings("off", listed[1].config.thinking.?);
    // Its mtime says 2001, before it was created: listed as updated when created (a coarse
    // mtime may lag the header's time by a tick; it still orders the list).
    try std.testing.expectEqualStrings(listed[1].created, listed[1].updated);
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    try session.writeListJson(&out.writer, listed[1..]);
    const expected = try std.fmt.allocPrint(arena.allocator(), "[{{\"id\":\"older\",\"path\":\"{s}\",\"created\":\"{s}\",\"updated\":\"{s}\",\"message_count\":2,\"first_user_text\":\"first question\",\"cwd\":\"{s}\",\"parent\":null,\"name\":null}}]", .{ listed[1].path, listed[1].created, listed[1].created, listed[1].cwd });
    try std.testing.expectEqualStrings(expected, out.written());
    try std.testing.expectEqual(@as(usize, 24), listed[1].created.len);
    try std.testing.expect(listed[1].cwd.len > 0);

    // The first user text is the conversation's as it is now, not the first ever written.
    var conv_diag: @import("../conversation_json.zig").Diagnostic = .{};
    try held.truncate(0, &conv_diag);
    try held.conversation.appendUserText("second thoughts");
    const relisted = try session.list(gpa, arena.allocator(), f.dir, &diag);
    try std.testing.expectEqualStrings("newer", relisted[0].id);
    try std.testing.expectEqualStrings("second thoughts", relisted[0].first_user_text);
}

test "a session's name: a name entry, the last one holds; a resume and the list see it, a fork does not keep it" {
    var f: Fixture = undefined;
    try f.init();
    defer f.deinit();
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    var diag: config_mod.Diagnostic = .{};
    {
        const a = try f.agent("named", .create);
        defer a.deinit();
        try std.testing.expectEqual(null, a.sessionInfo().?.name);
        try a.conversation.appendUserText("a question");
        try a.setSessionName("first name", &diag);
        try a.setSessionName("the \"build\" fix", &diag);
        try std.testing.expectEqualStrings("the \"build\" fix", a.sessionInfo().?.name.?);
        try std.testing.expectError(error.InvalidArgument, a.setSessionName("", &diag));
        try std.testing.expectError(error.InvalidArgument, a.setSessionName("two\nlines", &diag));
        try std.testing.expectEqualStrings("a session name is 1 to 200 bytes of UTF-8 text on one line", diag.message());
    }
    const bytes = try f.read("named");
    defer gpa.free(bytes);
    try std.testing.expect(std.mem.endsWith(u8, bytes, "{\"type\":\"name\",\"name\":\"first name\"}\n{\"type\":\"name\",\"name\":\"the \\\"build\\\" fix\"}\n"));
    {
        const a = try f.agent("named", .@"resume");
        defer a.deinit();
        try std.testing.expectEqualStrings("the \"build\" fix", a.sessionInfo().?.name.?);
        try std.testing.expectEqual(@as(usize, 1), a.messageCount());
        try a.forkSession(1, "forked", &diag);
        try std.testing.expectEqual(null, a.sessionInfo().?.name);
    }
    const listed = try session.list(gpa, arena.allocator(), f.dir, &diag);
    try std.testing.expectEqual(@as(usize, 2), listed.len);
    for (listed) |l| {
        if (std.mem.eql(u8, l.id, "named")) try std.testing.expectEqualStrings("the \"build\" fix", l.name.?) else try std.testing.expectEqual(null, l.name);
    }
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    try session.writeListJson(&out.writer, listed);
    try std.testing.expect(std.mem.indexOf(u8, out.written(), "\"name\":\"the \\\"build\\\" fix\"") != null);
    try std.testing.expect(std.mem.indexOf(u8, out.written(), "\"name\":null") != null);
    // Without a session there is nothing to name.
    var no_session = f.config(null, .create);
    no_session.session = null;
    const bare = try Agent.initWithDiagnostic(gpa, no_session, &diag);
    defer bare.deinit();
    try std.testing.expectError(error.State, bare.setSessionName("x", &diag));
}

test "list: sessions last written in the same tick are ordered by their creation, not by their ids" {
    // A clean clone's `--continue` test once resumed the older of two sessions: their mtimes
    // were equal and the tie went to the greater id, whose suffix is random.
    var f: Fixture = undefined;
    try f.init();
    defer f.deinit();
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    const files = [_]struct { id: []const u8, created: []const u8 }{
        .{ .id = "zz-created-first", .created = "2026-12-06T10:00:00.001Z" },
        .{ .id = "aa-created-second", .created = "2026-12-06T10:00:00.002Z" },
        .{ .id = "mm-created-second-too", .created = "2026-12-06T10:00:00.002Z" },
    };
    const times = [2]std.c.timespec{ .{ .sec = 1_800_000_000, .nsec = 0 }, .{ .sec = 1_800_000_000, .nsec = 0 } };
    for (files) |file| {
        var name_buf: [64]u8 = undefined;
        const name = try std.fmt.bufPrint(&name_buf, "{s}.jsonl", .{file.id});
        const header = try std.fmt.allocPrint(arena.allocator(), "{{\"type\":\"session\",\"version\":1,\"id\":\"{s}\",\"created\":\"{s}\",\"cwd\":\"/w\",\"parent\":null}}\n", .{ file.id, file.created });
        try f.tmp.dir.writeFile(std.testing.io, .{ .sub_path = name, .data = header });
        var path_buf: [std.c.PATH_MAX:0]u8 = undefined;
        const path = try std.fmt.bufPrintZ(&path_buf, "{s}/{s}", .{ f.dir, name });
        try std.testing.expectEqual(@as(c_int, 0), std.c.utimensat(std.c.AT.FDCWD, path, &times, 0));
    }
    var diag: config_mod.Diagnostic = .{};
    const listed = try session.list(gpa, arena.allocator(), f.dir, &diag);
    try std.testing.expectEqual(@as(usize, 3), listed.len);
    // Created later first; created in the same ms: by id, as before.
    try std.testing.expectEqualStrings("mm-created-second-too", listed[0].id);
    try std.testing.expectEqualStrings("aa-created-second", listed[1].id);
    try std.testing.expectEqualStrings("zz-created-first", listed[2].id);
}

test "a write that fails fails the call with SessionWrite: a run leaves nothing, a turn keeps its message in memory" {
    var f: Fixture = undefined;
    try f.init();
    defer f.deinit();
    const a = try f.agent("fails", .create);
    defer a.deinit();
    a.session.?.journal.file.broken = true; // as after a write that could not be cut back off
    try std.testing.expectError(error.SessionWrite, a.run("hi"));
    try std.testing.expectEqual(@as(usize, 0), a.conversation.messages.items.len);
    try std.testing.expect(!a.busy);
    var diag: config_mod.Diagnostic = .{};
    try std.testing.expectError(error.SessionWrite, a.setConfig("{\"model\":\"changed\"}", &diag));
    try std.testing.expectEqualStrings("claude-test", a.config.model);
    try std.testing.expectError(error.SessionWrite, a.conversation.appendUserText("x"));
    try std.testing.expectEqual(@as(usize, 1), a.conversation.messages.items.len);
}

test "the session key: parsed with its rules, refused by set_config" {
    var arena: std.heap.ArenaAllocator = .init(gpa);
    defer arena.deinit();
    var diag: config_mod.Diagnostic = .{};
    const c = try config_mod.parseJson(arena.allocator(), "{\"provider\":\"anthropic\",\"model\":\"m\",\"session\":{\"dir\":\"/tmp/s\",\"id\":\"a.b-c_1\",\"mode\":\"resume\",\"fsync\":false}}", &diag);
    try std.testing.expectEqualStrings("/tmp/s", c.session.?.dir.?);
    try std.testing.expectEqualStrings("a.b-c_1", c.session.?.id.?);
    try std.testing.expectEqual(config_mod.Session.Mode.@"resume", c.session.?.mode);
    try std.testing.expect(!c.session.?.fsync);
    const d = try config_mod.parseJson(arena.allocator(), "{\"provider\":\"anthropic\",\"model\":\"m\",\"session\":{}}", &diag);
    try std.testing.expectEqual(config_mod.Session{}, d.session.?);
    const cases = [_]struct { []const u8, []const u8 }{
        .{ "{\"id\":\"../etc\"}", "session.id must be 1 to 128 of" },
        .{ "{\"id\":\".x\"}", "session.id must be 1 to 128 of" },
        .{ "{\"id\":7}", "session.id must be a string" },
        .{ "{\"dir\":\"\"}", "session.dir must be a directory path" },
        .{ "{\"mode\":\"append\"}", "session.mode must be one of open, resume, create, not \"append\"" },
        .{ "{\"mode\":\"resume\"}", "session.mode \"resume\" needs session.id" },
        .{ "{\"fsync\":1}", "session.fsync must be true or false" },
        .{ "{\"path\":\"x\"}", "unknown session key \"path\"" },
        .{ "[]", "session must be a JSON object" },
    };
    for (cases) |case| {
        var buf: [200]u8 = undefined;
        const json = try std.fmt.bufPrint(&buf, "{{\"provider\":\"anthropic\",\"model\":\"m\",\"session\":{s}}}", .{case[0]});
        try std.testing.expectError(error.InvalidConfig, config_mod.parseJson(arena.allocator(), json, &diag));
        try std.testing.expectEqualStrings(case[1], diag.message()[0..@min(case[1].len, diag.message().len)]);
    }
    const agent = try Agent.init(gpa, .{ .provider = .anthropic, .model = "m", .api_key = "k" });
    defer agent.deinit();
    try std.testing.expectError(error.InvalidConfig, agent.setConfig("{\"session\":{\"id\":\"x\"}}", &diag));
    try std.testing.expect(std.mem.startsWith(u8, diag.message(), "session cannot be changed by set_config"));
    try std.testing.expectEqual(null, agent.sessionInfo());
    try std.testing.expectError(error.State, agent.forkSession(0, null, &diag));
}

test "a file that is not a session is never cut: a first line that is no header is an error" {
    var f: Fixture = undefined;
    try f.init();
    defer f.deinit();
    var diag: config_mod.Diagnostic = .{};
    for ([_][]const u8{ "{\"hello\":1}\n", "hello", "{\"type\":\"message\",\"message\":{}}\n" }) |bytes| {
        try f.tmp.dir.writeFile(std.testing.io, .{ .sub_path = "mine.jsonl", .data = bytes });
        try std.testing.expectError(error.SessionCorrupt, Agent.initWithDiagnostic(gpa, f.config("mine", .open), &diag));
        try std.testing.expectEqualStrings("line 1 is not a session entry", diag.message());
        const after = try f.read("mine");
        defer gpa.free(after);
        try std.testing.expectEqualStrings(bytes, after);
    }
    // A torn header (a crash while the session was made): cut, and the session made anew.
    try f.tmp.dir.writeFile(std.testing.io, .{ .sub_path = "mine.jsonl", .data = "{\"type\":\"sess" });
    const a = try f.agent("mine", .open);
    defer a.deinit();
    try std.testing.expect(!a.sessionInfo().?.resumed);
    try std.testing.expectEqual(@as(u64, "{\"type\":\"sess".len), a.sessionInfo().?.torn_bytes);
}

test "a working directory whose name is not UTF-8 goes into the header mended; the session resumes" {
    var f: Fixture = undefined;
    try f.init();
    defer f.deinit();
    var abs_buf: [std.c.PATH_MAX]u8 = undefined;
    var rel_buf: [std.c.PATH_MAX:0]u8 = undefined;
    const abs = std.c.realpath(try std.fmt.bufPrintZ(&rel_buf, "{s}", .{f.dir}), &abs_buf) orelse return error.NoPath;
    const dir = std.mem.span(abs);
    var saved_buf: [std.c.PATH_MAX]u8 = undefined;
    const saved = std.c.getcwd(&saved_buf, saved_buf.len) orelse return error.NoCwd;
    var odd_buf: [std.c.PATH_MAX:0]u8 = undefined;
    const odd = try std.fmt.bufPrintZ(&odd_buf, "{s}/odd\xff", .{dir});
    try std.testing.expectEqual(@as(c_int, 0), std.c.mkdir(odd, 0o700));
    try std.testing.expectEqual(@as(c_int, 0), std.c.chdir(odd));
    defer _ = std.c.chdir(@ptrCast(saved));
    var diag: config_mod.Diagnostic = .{};
    const config: config_mod.Config = .{ .provider = .anthropic, .model = "m", .api_key = "k", .session = .{ .dir = dir, .id = "odd" } };
    (try Agent.initWithDiagnostic(gpa, config, &diag)).deinit();
    const again = try Agent.initWithDiagnostic(gpa, config, &diag);
    defer again.deinit();
    try std.testing.expect(again.sessionInfo().?.resumed);
    var path_buf: [std.c.PATH_MAX]u8 = undefined;
    const bytes = try std.Io.Dir.cwd().readFileAlloc(std.testing.io, try std.fmt.bufPrint(&path_buf, "{s}/odd.jsonl", .{dir}), gpa, .unlimited);
    defer gpa.free(bytes);
    try std.testing.expect(std.mem.indexOf(u8, bytes, "/odd\xef\xbf\xbd\"") != null);
}

test "a turn that fails keeping nothing leaves no user message in the session file: a resume alternates" {
    var f: Fixture = undefined;
    try f.init();
    defer f.deinit();
    const first = try f.agent("rolled", .create);
    const stream = try first.run("lost");
    stream.close(); // canceled before anything was sent
    try std.testing.expectEqual(@as(usize, 0), first.conversation.messages.items.len);
    first.deinit();

    const second = try f.agent("rolled", .@"resume");
    defer second.deinit();
    try std.testing.expectEqual(@as(usize, 0), second.conversation.messages.items.len);
}
