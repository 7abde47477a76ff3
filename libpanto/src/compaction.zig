//! Compaction: when a conversation grows toward the model's context window, its older messages
//! are summarized by the model and replaced by one user message holding the summary. This file
//! holds the rules (how big the context is, when to compact, where to cut, what the summary
//! request says); stream.zig makes the summary request, as one more request of a turn (or the
//! only one, for `Agent.compact`).
//!
//! The estimate: the provider's usage (input, cache and output tokens) of the last assistant
//! message that reported one, plus about one token per 4 characters of every message after it
//! (an image or a document counts `media_chars`, whatever its size in base64). Without a usage,
//! the characters of every message and of the system prompt.
const std = @import("std");
const Allocator = std.mem.Allocator;
const conversation = @import("conversation.zig");
const Conversation = conversation.Conversation;
const Message = conversation.Message;
const Block = conversation.Block;
const config_mod = @import("config.zig");
const Config = config_mod.Config;
const Usage = @import("event.zig").Usage;
const catalog = @import("catalog/catalog.zig");

/// The summarization prompt (the summary request's system prompt) unless the config gives
/// one; docs/conversations.md shows it.
pub const default_prompt =
    \\You are summarizing the earlier part of a conversation between a user and an AI assistant
    \\that works with tools, so that the assistant can go on with only your summary and the most
    \\recent messages, which it will still see. The conversation is given between
    \\<conversation> tags; each entry starts with [User], [Assistant], [Assistant thinking],
    \\[Tool call name(id)] or [Tool result id].
    \\
    \\Write a concise summary that keeps everything needed to continue the work:
    \\- the user's goals, requests, preferences and constraints (quote them where the exact
    \\  words matter);
    \\- decisions taken and why, and approaches tried that failed;
    \\- the state of the work: what is done, what is in progress, what remains;
    \\- facts learned from tool results: file paths, names, identifiers, commands, values,
    \\  errors and how they were fixed;
    \\- open questions, and the next step the assistant was about to take.
    \\If the conversation starts with an earlier summary, fold it into yours.
    \\
    \\Do not continue the conversation, answer its questions or call tools. Reply with the
    \\summary only, as plain text with short sections or bullet points, in the language of the
    \\conversation.
;

/// What an image or a document counts, in characters (about 1,200 tokens).
pub const media_chars = 4800;

/// The text the summary message starts and ends with, around the summary.
pub const summary_prefix = "The conversation before this point was summarized:\n\n<summary>\n";
pub const summary_suffix = "\n</summary>";

/// The context window compaction works with: the config's, else the most input tokens the
/// model takes (the model catalog, or the config's model_info); null for an unknown model.
pub fn contextWindow(config: Config) ?u64 {
    if (config.compaction.context_window) |n| return n;
    const model = catalog.resolve(@tagName(config.provider), config.model, config.model_info) orelse return null;
    return model.max_input;
}

/// Tokens for `chars` characters: one per 4, rounded up.
pub fn tokensOf(chars: u64) u64 {
    return chars / 4 + @intFromBool(chars % 4 != 0);
}

/// The characters a message counts in the estimate.
pub fn messageChars(m: Message) u64 {
    var chars: u64 = 0;
    for (m.blocks) |b| chars +|= blockChars(b);
    return chars +| m.reasoning_details.len; // (sent back with the message's calls)
}

fn blockChars(b: Block) u64 {
    return switch (b.kind) {
        .text => b.text.len +| b.citations.len, // (citations are sent back with it)
        .thinking, .redacted_thinking, .server_block => b.text.len,
        .tool_call => b.name.len + b.text.len,
        .tool_result => result: {
            var chars: u64 = b.text.len; // (its text parts, joined)
            for (b.parts) |p| {
                if (p.kind != .text) chars +|= media_chars;
            }
            break :result chars;
        },
        .image, .document => media_chars,
    };
}

fn usageTokens(u: Usage) u64 {
    return u.input_tokens +| u.cache_read_tokens +| u.cache_write_tokens +| u.output_tokens;
}

/// The context's estimated size, in tokens, were the conversation sent now (see the top).
/// Usage reported before `c.stale_usage_before` describes a context since compacted: it is
/// not used.
pub fn estimate(c: *const Conversation, system: ?[]const u8) u64 {
    const messages = c.messages.items;
    const first_usable = @min(c.stale_usage_before, messages.len);
    var chars: u64 = 0;
    var i = messages.len;
    while (i > 0) {
        i -= 1;
        const m = messages[i];
        if (i >= first_usable and m.role == .assistant and usageTokens(m.usage) > 0)
            return usageTokens(m.usage) +| tokensOf(chars);
        chars +|= messageChars(m);
    }
    if (system) |s| chars +|= s.len;
    return tokensOf(chars);
}

/// Whether a cut before `messages[i]` is allowed: the kept part must not start with tool
/// results (their calls would be summarized away).
fn validCut(messages: []const Message, i: usize) bool {
    const m = messages[i];
    if (m.role == .assistant) return true;
    for (m.blocks) |b| if (b.kind == .tool_result) return false;
    return true;
}

/// Where the kept part starts: about the last `keep_recent_tokens` stay, moved back (older)
/// to the nearest valid cut. 0: nothing is older than that (or only an earlier summary is),
/// nothing to compact.
pub fn cutPoint(messages: []const Message, keep_recent_tokens: u64) usize {
    var kept: u64 = 0;
    var i = messages.len;
    while (i > 0) {
        i -= 1;
        kept +|= tokensOf(messageChars(messages[i]));
        if (kept >= keep_recent_tokens) break;
    } else return 0;
    while (i > 0 and !validCut(messages, i)) i -= 1;
    // Summarizing only the summary of an earlier compaction would gain nothing.
    if (i == 1 and messages[0].compaction != null) return 0;
    return i;
}

pub const Reason = enum { threshold, manual };

/// A compaction decided: the messages before `first_kept` are summarized.
pub const Plan = struct {
    first_kept: usize,
    tokens_before: u64,
    reason: Reason,
};

/// The compaction a request about to go out needs, or null: compaction is enabled, a
/// context window is known, the estimate passes it less reserve_tokens, and something is
/// old enough to summarize.
pub fn planThreshold(c: *const Conversation, config: Config) ?Plan {
    const settings = config.compaction;
    if (!settings.enabled) return null;
    const window = contextWindow(config) orelse return null;
    const tokens = estimate(c, config.system);
    if (tokens <= window -| settings.reserve_tokens) return null;
    const first_kept = cutPoint(c.messages.items, settings.keep_recent_tokens);
    if (first_kept == 0) return null;
    return .{ .first_kept = first_kept, .tokens_before = tokens, .reason = .threshold };
}

/// The compaction `Agent.compact` asks for, or null when nothing is old enough.
pub fn planManual(c: *const Conversation, config: Config) ?Plan {
    const first_kept = cutPoint(c.messages.items, config.compaction.keep_recent_tokens);
    if (first_kept == 0) return null;
    return .{ .first_kept = first_kept, .tokens_before = estimate(c, config.system), .reason = .manual };
}

/// Writes the messages as the text to summarize: one entry per block, "[User]: text",
/// "[Assistant]: text", "[Assistant thinking]: text", "[Tool call name(id)]: input",
/// "[Tool result id]: text", "[Image]", "[Document name]", separated by blank lines.
pub fn serialize(w: *std.Io.Writer, messages: []const Message) std.Io.Writer.Error!void {
    var first = true;
    for (messages) |m| {
        for (m.blocks) |b| {
            // Opaque, or the provider's own (a search's encrypted results): nothing to read.
            if (b.kind == .redacted_thinking or b.kind == .server_block) continue;
            if (!first) try w.writeAll("\n\n");
            first = false;
            switch (b.kind) {
                .text => try w.print("[{s}]: {s}", .{ if (m.role == .user) "User" else "Assistant", b.text }),
                .thinking => try w.print("[Assistant thinking]: {s}", .{b.text}),
                .redacted_thinking, .server_block => unreachable, // (skipped above)
                .tool_call => try w.print("[Tool call {s}({s})]: {s}", .{ b.name, b.id, b.text }),
                .tool_result => {
                    try w.print("[Tool result {s}]: {s}", .{ b.id, b.text });
                    for (b.parts) |p| if (p.kind != .text) {
                        try w.writeAll("\n");
                        try writeMedia(w, p);
                    };
                },
                .image, .document => try writeMedia(w, b),
            }
        }
    }
}

fn writeMedia(w: *std.Io.Writer, b: Block) std.Io.Writer.Error!void {
    if (b.kind == .image) return w.writeAll("[Image]");
    if (b.name.len == 0) return w.writeAll("[Document]");
    try w.print("[Document {s}]", .{b.name});
}

/// A compaction under way in a stream: the plan, and the summary request's conversation (one
/// user message: the messages to summarize, serialized), made just before the request.
pub const Run = struct {
    gpa: Allocator,
    plan: Plan,
    /// COMPACTION_START was handed out.
    announced: bool = false,
    request: Conversation,
    /// `request` holds the summarized messages of the plan.
    prepared: bool = false,
    /// The summary request's system prompt when the user gave instructions for this
    /// compaction (`focus`): the compaction prompt, then them. Owned.
    system: ?[]u8 = null,

    pub fn create(gpa: Allocator, plan: Plan) Allocator.Error!*Run {
        const run = try gpa.create(Run);
        run.* = .{ .gpa = gpa, .plan = plan, .request = .init(gpa) };
        return run;
    }

    /// Makes the summary request's conversation from `c`, unless it was made already.
    pub fn prepare(run: *Run, c: *const Conversation) Allocator.Error!void {
        if (run.prepared) return;
        var text: std.Io.Writer.Allocating = .init(run.gpa);
        defer text.deinit();
        const w = &text.writer;
        w.writeAll("<conversation>\n") catch return error.OutOfMemory;
        serialize(w, c.messages.items[0..run.plan.first_kept]) catch return error.OutOfMemory;
        w.writeAll("\n</conversation>") catch return error.OutOfMemory;
        run.request.appendUserText(text.written()) catch |err| switch (err) {
            error.OutOfMemory => return error.OutOfMemory,
            error.SessionWrite => unreachable, // (the request's conversation has no journal)
        };
        run.prepared = true;
    }

    /// The compaction again, from its start, by `plan` (the conversation may have changed).
    pub fn restart(run: *Run, plan: Plan) void {
        run.plan = plan;
        run.announced = false;
        run.request.deinit();
        run.request = .init(run.gpa);
        run.prepared = false;
    }

    /// The user's instructions for this summary (`/compact focus on the API`): appended to
    /// the compaction prompt `prompt`, under a line saying they are the user's. Blank
    /// instructions are none.
    pub fn focus(run: *Run, prompt: []const u8, instructions: []const u8) Allocator.Error!void {
        const text = std.mem.trim(u8, instructions, " \t\r\n");
        if (text.len == 0) return;
        const system = try std.mem.concat(run.gpa, u8, &.{ prompt, focus_heading, text });
        if (run.system) |old| run.gpa.free(old);
        run.system = system;
    }

    /// What goes between the compaction prompt and the user's instructions.
    pub const focus_heading = "\n\nThe user's instructions for this summary (follow them where they ask what to keep or stress):\n";

    /// `requestConfig`, with this compaction's own system prompt when it has one (`focus`).
    pub fn requestConfigOf(run: *const Run, config: Config) Config {
        var c = requestConfig(config);
        if (run.system) |s| c.system = s;
        return c;
    }

    pub fn destroy(run: *Run) void {
        if (run.system) |s| run.gpa.free(s);
        run.request.deinit();
        run.gpa.destroy(run);
    }

    /// The summary request's configuration: the agent's, with the compaction prompt as the
    /// system prompt and thinking off. Its strings are the agent's.
    pub fn requestConfig(config: Config) Config {
        var c = config;
        c.system = config.compaction.prompt orelse default_prompt;
        c.thinking = .off;
        // A summary is text, asked once: no thinking budget, no structured answer, no cache
        // entry to pay for.
        c.request.thinking_budget = null;
        c.request.response_format = null;
        c.request.cache.mode = .off;
        c.request.server_tools = &.{}; // (nor a tool)
        c.request.hosted_mcp_servers = &.{};
        return c;
    }

    pub const FinishError = error{ EmptySummary, OutOfMemory, SessionWrite };

    /// The summary request answered `texts` (its text blocks): the summarized messages are
    /// replaced by the summary message. Nothing changes when this fails.
    pub fn finish(run: *Run, c: *Conversation, texts: []const []const u8, system: ?[]const u8) FinishError!Finished {
        const gpa = run.gpa;
        var joined: std.ArrayList(u8) = .empty;
        defer joined.deinit(gpa);
        for (texts, 0..) |t, i| {
            if (i > 0) try joined.append(gpa, '\n');
            try joined.appendSlice(gpa, t);
        }
        const summary = std.mem.trim(u8, joined.items, " \t\r\n");
        if (summary.len == 0) return error.EmptySummary;
        const text = try std.mem.concat(gpa, u8, &.{ summary_prefix, summary, summary_suffix });
        const blocks = gpa.alloc(Block, 1) catch |err| {
            gpa.free(text);
            return err;
        };
        blocks[0] = .{ .kind = .text, .text = text, .id = "", .name = "", .media_type = "", .signature = "" };
        const message: Message = .{
            .role = .user,
            .blocks = blocks,
            .compaction = .{ .message_count = run.plan.first_kept, .tokens_before = run.plan.tokens_before },
        };
        // The kept usage describes the context before: the new size is counted in characters.
        var chars: u64 = messageChars(message) +| if (system) |s| s.len else 0;
        for (c.messages.items[run.plan.first_kept..]) |m| chars +|= messageChars(m);
        const tokens_after = tokensOf(chars);
        c.replacePrefix(run.plan.first_kept, message, tokens_after) catch |err| {
            conversation.freeMessage(gpa, message);
            return err;
        };
        return .{ .summary = text[summary_prefix.len..][0..summary.len], .tokens_after = tokens_after };
    }

    /// `summary` is the summary message's, in the conversation.
    pub const Finished = struct { summary: []const u8, tokens_after: u64 };
};

const testing = std.testing;

test "context windows: the config's, else the model's most input tokens from the catalog" {
    var config: Config = .{ .provider = .anthropic, .model = "m" };
    try testing.expectEqual(null, contextWindow(config));
    config.model = "claude-sonnet-4-5-20250929";
    try testing.expectEqual(@as(?u64, 200_000), contextWindow(config));
    config.model_info = .{ .max_input = 90_000 };
    try testing.expectEqual(@as(?u64, 90_000), contextWindow(config));
    config.compaction.context_window = 5000;
    try testing.expectEqual(@as(?u64, 5000), contextWindow(config));
    config = .{ .provider = .@"openai-responses", .model = "gpt-5" };
    try testing.expectEqual(@as(?u64, 272_000), contextWindow(config));
    config = .{ .provider = .openai, .model = "gpt-5-turbo-of-the-future" };
    try testing.expectEqual(null, contextWindow(config));
}

test "the estimate: the last usage plus what came after; characters alone without one; media a fixed size" {
    var c: Conversation = .init(testing.allocator);
    defer c.deinit();
    try testing.expectEqual(@as(u64, 0), estimate(&c, null));
    try testing.expectEqual(@as(u64, 2), estimate(&c, "12345")); // the system prompt, rounded up
    try c.appendCopy(.user, &.{ .{ .kind = .text, .text = "abcdefgh" }, .{ .kind = .image, .text = "iVBORw0KGgo" ** 1000, .media_type = "image/png" } });
    try testing.expectEqual(@as(u64, (8 + media_chars) / 4), estimate(&c, null));
    try c.appendCopy(.assistant, &.{ .{ .kind = .thinking, .text = "hmm" }, .{ .kind = .tool_call, .id = "c1", .name = "read", .text = "{\"p\":1}" } });
    c.messages.items[1].usage = .{ .input_tokens = 1000, .output_tokens = 50, .cache_read_tokens = 7, .cache_write_tokens = 3, .reasoning_tokens = 99 };
    try testing.expectEqual(@as(u64, 1060), estimate(&c, "a system prompt the usage counted"));
    const parts = [_]Block{ .{ .kind = .text, .text = "seen" }, .{ .kind = .document, .text = "JVBERi0=", .media_type = "application/pdf", .name = "a.pdf" } };
    try c.appendCopy(.user, &.{.{ .kind = .tool_result, .id = "c1", .text = "seen", .parts = &parts }});
    try testing.expectEqual(@as(u64, 1060 + 1 + media_chars / 4), estimate(&c, null));
    // Usage kept across a compaction no longer applies: characters from there on.
    c.stale_usage_before = 2;
    const chars: u64 = 8 + media_chars + 3 + 4 + 7 + 4 + media_chars;
    try testing.expectEqual(tokensOf(chars), estimate(&c, null));
    try testing.expectEqual(tokensOf(chars + 6), estimate(&c, "system"));
}

/// A conversation of messages given as role letters: u (user text), a (assistant text),
/// c (assistant tool call), r (user tool result), s (an earlier summary); each of `chars`.
fn conversationOf(roles: []const u8, chars: usize) !Conversation {
    var c: Conversation = .init(testing.allocator);
    errdefer c.deinit();
    const text = try testing.allocator.alloc(u8, chars);
    defer testing.allocator.free(text);
    @memset(text, 'x');
    for (roles) |r| switch (r) {
        'u', 's' => {
            try c.appendCopy(.user, &.{.{ .kind = .text, .text = text }});
            if (r == 's') c.messages.items[c.messages.items.len - 1].compaction = .{ .message_count = 3, .tokens_before = 9 };
        },
        'a' => try c.appendCopy(.assistant, &.{.{ .kind = .text, .text = text }}),
        'c' => try c.appendCopy(.assistant, &.{.{ .kind = .tool_call, .id = "c", .name = "", .text = text }}),
        'r' => try c.appendCopy(.user, &.{.{ .kind = .tool_result, .id = "c", .text = text }}),
        else => unreachable,
    };
    return c;
}

test "the cut keeps about keep_recent_tokens and never separates a tool call from its result" {
    const cases = [_]struct { []const u8, u64, usize }{
        // roles, keep_recent_tokens (messages are 10 tokens each), first kept
        .{ "uaua", 10, 3 },
        .{ "uaua", 15, 2 },
        .{ "uaua", 20, 2 },
        .{ "uaua", 40, 0 }, // everything is recent
        .{ "uaua", 41, 0 },
        .{ "ucrcra", 10, 5 },
        .{ "ucrcra", 20, 3 }, // the result's call comes along
        .{ "ucrcr", 10, 3 },
        .{ "ucrcr", 30, 1 },
        .{ "cr", 10, 0 }, // the only cut would separate them
        .{ "uaua", 0, 3 }, // the last message always stays
        .{ "sua", 20, 0 }, // only an earlier summary to summarize
        .{ "suaua", 20, 3 },
    };
    for (cases) |case| {
        var c = try conversationOf(case[0], 40);
        defer c.deinit();
        testing.expectEqual(case[2], cutPoint(c.messages.items, case[1])) catch |err| {
            std.debug.print("{s} keeping {d}\n", .{ case[0], case[1] });
            return err;
        };
    }
}

test "planning: a threshold plan only past context_window - reserve_tokens, with something to summarize" {
    var c = try conversationOf("uaua", 400); // 100 tokens each
    defer c.deinit();
    var config: Config = .{ .provider = .anthropic, .model = "m", .compaction = .{ .context_window = 500, .reserve_tokens = 100, .keep_recent_tokens = 150 } };
    try testing.expectEqual(null, planThreshold(&c, config)); // 400 <= 400
    config.compaction.reserve_tokens = 101;
    const plan = planThreshold(&c, config).?;
    try testing.expectEqual(@as(usize, 2), plan.first_kept);
    try testing.expectEqual(@as(u64, 400), plan.tokens_before);
    config.compaction.enabled = false;
    try testing.expectEqual(null, planThreshold(&c, config));
    try testing.expectEqual(@as(usize, 2), planManual(&c, config).?.first_kept); // (enabled is for the threshold)
    config.compaction = .{ .keep_recent_tokens = 150, .reserve_tokens = 0 };
    try testing.expectEqual(null, planThreshold(&c, config)); // no window known for "m"
    config.compaction.keep_recent_tokens = 1000;
    try testing.expectEqual(null, planManual(&c, config));
}

test "the text to summarize names each block's kind" {
    var c: Conversation = .init(testing.allocator);
    defer c.deinit();
    try c.appendCopy(.user, &.{ .{ .kind = .text, .text = "look" }, .{ .kind = .image, .text = "AAAA", .media_type = "image/png" }, .{ .kind = .document, .text = "AAAA", .media_type = "application/pdf", .name = "spec.pdf" } });
    try c.appendCopy(.assistant, &.{ .{ .kind = .thinking, .text = "pondering", .signature = "sig" }, .{ .kind = .redacted_thinking, .text = "opaque" }, .{ .kind = .text, .text = "Reading." }, .{ .kind = .tool_call, .id = "c1", .name = "read", .text = "{\"path\":\"a\"}" } });
    const parts = [_]Block{ .{ .kind = .text, .text = "shown" }, .{ .kind = .image, .text = "AAAA", .media_type = "image/png" }, .{ .kind = .document, .text = "AAAA", .media_type = "application/pdf" } };
    try c.appendCopy(.user, &.{.{ .kind = .tool_result, .id = "c1", .text = "shown", .parts = &parts }});
    var out: std.Io.Writer.Allocating = .init(testing.allocator);
    defer out.deinit();
    try serialize(&out.writer, c.messages.items);
    try testing.expectEqualStrings(
        \\[User]: look
        \\
        \\[Image]
        \\
        \\[Document spec.pdf]
        \\
        \\[Assistant thinking]: pondering
        \\
        \\[Assistant]: Reading.
        \\
        \\[Tool call read(c1)]: {"path":"a"}
        \\
        \\[Tool result c1]: shown
        \\[Image]
        \\[Document]
    , out.written());
}

test "a finished compaction replaces the summarized messages with the summary message; an empty summary changes nothing" {
    var c = try conversationOf("uaua", 8);
    defer c.deinit();
    c.messages.items[3].usage = .{ .input_tokens = 70 };
    const plan: Plan = .{ .first_kept = 2, .tokens_before = 77, .reason = .manual };
    const run = try Run.create(testing.allocator, plan);
    defer run.destroy();
    try run.prepare(&c);
    try run.prepare(&c); // (once)
    try testing.expectEqual(@as(usize, 1), run.request.messages.items.len);
    try testing.expectEqualStrings("<conversation>\n[User]: xxxxxxxx\n\n[Assistant]: xxxxxxxx\n</conversation>", run.request.messages.items[0].blocks[0].text);
    try testing.expectError(error.EmptySummary, run.finish(&c, &.{ " \n", "" }, null));
    try testing.expectEqual(@as(usize, 4), c.messages.items.len);
    const done = try run.finish(&c, &.{ " Part one.", "Part two.\n" }, "sys");
    try testing.expectEqualStrings("Part one.\nPart two.", done.summary);
    try testing.expectEqual(@as(usize, 3), c.messages.items.len);
    const summary = c.messages.items[0];
    try testing.expectEqualStrings(summary_prefix ++ "Part one.\nPart two." ++ summary_suffix, summary.blocks[0].text);
    try testing.expectEqual(@as(u64, 2), summary.compaction.?.message_count);
    try testing.expectEqual(@as(u64, 77), summary.compaction.?.tokens_before);
    try testing.expectEqual(tokensOf(summary.blocks[0].text.len + 16 + 3), done.tokens_after);
    try testing.expectEqual(@as(usize, 3), c.stale_usage_before);
    try testing.expectEqual(done.tokens_after, estimate(&c, "sys")); // (the kept usage of 70 is not used)
}

test "the summary request's configuration: the prompt as system prompt, thinking off" {
    var config: Config = .{ .provider = .anthropic, .model = "m", .system = "mine", .thinking = .high };
    try testing.expectEqualStrings(default_prompt, Run.requestConfig(config).system.?);
    try testing.expectEqual(config_mod.Thinking.off, Run.requestConfig(config).thinking);
    config.compaction.prompt = "Summarize.";
    try testing.expectEqualStrings("Summarize.", Run.requestConfig(config).system.?);
    try testing.expectEqualStrings("m", Run.requestConfig(config).model);
}

test "the user's instructions for a summary follow the prompt, for that compaction alone" {
    var config: Config = .{ .provider = .anthropic, .model = "m" };
    config.compaction.prompt = "Summarize.";
    const run = try Run.create(testing.allocator, .{ .first_kept = 2, .tokens_before = 7, .reason = .manual });
    defer run.destroy();
    try run.focus("Summarize.", " \n ");
    try testing.expectEqualStrings("Summarize.", run.requestConfigOf(config).system.?); // blank: none
    try run.focus("Summarize.", "  keep the API names\n");
    try testing.expectEqualStrings("Summarize." ++ Run.focus_heading ++ "keep the API names", run.requestConfigOf(config).system.?);
    try testing.expectEqual(config_mod.Thinking.off, run.requestConfigOf(config).thinking);
    // The config itself is untouched.
    try testing.expectEqualStrings("Summarize.", config.compaction.prompt.?);
}
