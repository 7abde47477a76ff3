//! The conversation an agent keeps across turns, in a provider-neutral shape. Each provider
//! module renders it into its own request format.
const std = @import("std");
const Allocator = std.mem.Allocator;

pub const Role = enum { user, assistant };

/// `server_block`: a block of the provider's that panto does not interpret (Anthropic's
/// server_tool_use, web_search_tool_result, compaction, a type added later, ...), kept as
/// the provider sent it and sent back only to the provider and model that wrote it.
pub const BlockKind = enum { text, thinking, redacted_thinking, tool_call, tool_result, image, document, server_block };
const StopReason = @import("event.zig").StopReason;
const Journal = @import("session/journal.zig").Journal;
const Usage = @import("event.zig").Usage;

pub const Block = struct {
    kind: BlockKind,
    /// text / thinking: the text; tool_call: the input JSON object; tool_result: the content
    /// (with `parts`: its text parts joined with "\n"); image / document: the bytes, base64;
    /// server_block: the block's JSON object as received (its streamed input filled in).
    text: []const u8,
    /// tool_call and tool_result: the call's id.
    id: []const u8 = "",
    /// tool_call: the tool's name; image / document: the name given, or ""; server_block:
    /// its type ("server_tool_use", ...); thinking of an OpenAI-compatible server: the name
    /// its reasoning came under ("reasoning_content", "reasoning", "reasoning_text"), which
    /// says whether it goes back (providers/openai/request.zig).
    name: []const u8 = "",
    /// image / document: the media type of the bytes.
    media_type: []const u8 = "",
    /// tool_result with media: its text, image and document blocks in order (else empty:
    /// the result is `text`).
    parts: []const Block = &.{},
    /// image: its pixels, as events report them (not sent).
    width: u32 = 0,
    height: u32 = 0,
    /// tool_result: the tool failed.
    is_error: bool = false,
    /// thinking, and text and tool_call of a provider that signs them (Gemini's thought
    /// signatures): the provider's signature, sent back with the block to the same provider
    /// and model only.
    signature: []const u8 = "",
    /// text: its citations (Anthropic's), a JSON array of the citation objects as received,
    /// or "" when none; sent back only to the provider and model that wrote it.
    citations: []const u8 = "",
};

pub const Message = struct {
    role: Role,
    blocks: []Block,
    /// Assistant messages: why the message ended (`aborted` for a canceled turn).
    stop_reason: StopReason = .none,
    /// Assistant messages: the provider ("anthropic", "openai", "openai-responses", "gemini", "bedrock") and model that wrote it, owned
    /// (gpa); "" when unknown (an imported message that did not say). Thinking blocks and
    /// their signatures go back only to the same provider and model (see panto.h).
    provider: []const u8 = "",
    model: []const u8 = "",
    /// Assistant messages: the message's usage as the provider reported it.
    usage: Usage = .{},
    /// Assistant messages: the id of the container Anthropic's code execution ran in (owned,
    /// gpa), "" for none; later requests to Anthropic carry the last one (request.zig).
    container: []const u8 = "",
    /// Assistant messages of an OpenAI-compatible server that gives them (OpenRouter): the
    /// message's `reasoning_details`, a JSON array of the elements assembled from its deltas
    /// (reasoning_details.zig), "" for none; sent back with the message's tool calls to the
    /// provider and model that wrote it.
    reasoning_details: []const u8 = "",
    /// A user message holding the summary of compacted messages: how many it replaced and
    /// the context's estimated size before.
    compaction: ?Compaction = null,
    /// User messages: the caller marked it a prompt-cache breakpoint (the per-turn option
    /// "cache_breakpoint"; providers/anthropic/cache.zig), kept across export and sessions.
    cache: bool = false,
};

pub const Compaction = struct { message_count: u64, tokens_before: u64 };

/// A change the conversation could not record in its journal fails with SessionWrite.
pub const AppendError = Allocator.Error || error{SessionWrite};

pub const Conversation = struct {
    gpa: Allocator,
    messages: std.ArrayList(Message) = .empty,
    /// Where every change is recorded as it is made (the agent's session file: session/),
    /// or null. An append is kept in memory also when recording it fails.
    journal: ?*Journal = null,
    /// Assistant messages before this index were kept across a compaction: their usage
    /// describes the context before it, which compaction.zig's estimate must not take.
    stale_usage_before: usize = 0,
    /// Messages appended so far, ever: a turn tells by it whether it kept anything after its
    /// user message (see Stream.settleFailedTurn).
    appended: u64 = 0,

    pub fn init(gpa: Allocator) Conversation {
        return .{ .gpa = gpa };
    }

    pub fn deinit(c: *Conversation) void {
        for (c.messages.items) |m| freeMessage(c.gpa, m);
        c.messages.deinit(c.gpa);
    }

    pub fn appendUserText(c: *Conversation, text: []const u8) AppendError!void {
        try c.appendCopy(.user, &.{.{ .kind = .text, .text = text }});
    }

    /// Appends a message of blocks the conversation takes (allocated with its gpa), also
    /// when this fails.
    pub fn appendOwned(c: *Conversation, role: Role, blocks: []Block) AppendError!void {
        return c.appendOwnedMessage(.{ .role = role, .blocks = blocks });
    }

    /// As `appendOwned`, a message with its marks (a user message's `cache`); its blocks are
    /// taken, its strings must be empty (an assistant message's come with appendMessage).
    pub fn appendOwnedMessage(c: *Conversation, m: Message) AppendError!void {
        std.debug.assert(m.provider.len == 0 and m.model.len == 0);
        c.messages.append(c.gpa, m) catch |err| {
            freeBlocks(c.gpa, m.blocks);
            return err;
        };
        c.appended += 1;
        try c.recordLast();
    }

    /// Removes the last message (a user message whose turn could not even start). Nothing
    /// changes when the journal cannot record it.
    pub fn dropLast(c: *Conversation) AppendError!void {
        if (c.messages.items.len == 0) return;
        if (c.journal) |j| try j.truncate(c.messages.items.len - 1);
        freeMessage(c.gpa, c.messages.pop().?);
        c.stale_usage_before = @min(c.stale_usage_before, c.messages.items.len);
    }

    /// Removes the last message and gives it to the caller (a failed turn's user message,
    /// which `reopen` puts back). Nothing changes when the journal cannot record it.
    pub fn takeLast(c: *Conversation) AppendError!?Message {
        if (c.messages.items.len == 0) return null;
        if (c.journal) |j| try j.truncate(c.messages.items.len - 1);
        const m = c.messages.pop().?;
        c.stale_usage_before = @min(c.stale_usage_before, c.messages.items.len);
        return m;
    }

    fn recordLast(c: *Conversation) AppendError!void {
        const j = c.journal orelse return;
        try j.message(&c.messages.items[c.messages.items.len - 1]);
    }

    /// Compaction (compaction.zig): the messages before `first_kept` (at least one) are
    /// replaced by `summary`, a user message whose blocks and strings the conversation
    /// takes. `tokens_after` is the context's estimated size now (for the session journal).
    /// Recorded first: when the journal cannot record it, nothing changes and `summary` stays
    /// the caller's.
    pub fn replacePrefix(c: *Conversation, first_kept: usize, summary: Message, tokens_after: u64) AppendError!void {
        if (c.journal) |j| try j.compaction(.{
            .summary_message = &summary,
            .first_kept = first_kept,
            .tokens_before = if (summary.compaction) |k| k.tokens_before else 0,
            .tokens_after = tokens_after,
        });
        std.debug.assert(first_kept >= 1 and first_kept <= c.messages.items.len);
        for (c.messages.items[0..first_kept]) |m| freeMessage(c.gpa, m);
        c.messages.replaceRangeAssumeCapacity(0, first_kept, &.{summary});
        c.stale_usage_before = c.messages.items.len;
    }

    /// Appends a message, copying the blocks' strings.
    pub fn appendCopy(c: *Conversation, role: Role, blocks: []const Block) AppendError!void {
        return c.appendMessage(role, blocks, .{});
    }

    /// Appends a message, copying the blocks' strings and the metadata's.
    pub fn appendMessage(c: *Conversation, role: Role, blocks: []const Block, meta: Meta) AppendError!void {
        {
            var m: Message = .{ .role = role, .blocks = &.{}, .stop_reason = meta.stop_reason, .usage = meta.usage, .cache = meta.cache };
            errdefer freeMessage(c.gpa, m);
            m.provider = try c.gpa.dupe(u8, meta.provider);
            m.model = try c.gpa.dupe(u8, meta.model);
            m.container = try c.gpa.dupe(u8, meta.container);
            m.reasoning_details = try c.gpa.dupe(u8, meta.reasoning_details);
            m.blocks = try copyBlocks(c.gpa, blocks);
            try c.messages.append(c.gpa, m);
        }
        c.appended += 1;
        try c.recordLast();
    }

    /// Keeps the first `count` messages (count <= the number of messages). Nothing changes
    /// when the journal cannot record it.
    pub fn truncate(c: *Conversation, count: usize) AppendError!void {
        std.debug.assert(count <= c.messages.items.len); // (callers check: see Agent.truncate)
        if (count == c.messages.items.len) return;
        if (c.journal) |j| try j.truncate(count);
        for (c.messages.items[count..]) |m| freeMessage(c.gpa, m);
        c.messages.shrinkRetainingCapacity(count);
        c.stale_usage_before = @min(c.stale_usage_before, count);
        c.stale_usage_before = @min(c.stale_usage_before, count);
    }

    /// Replaces every message with `messages`, which the conversation takes (owned by its gpa,
    /// the slice too) when this succeeds. Nothing changes when the journal cannot record it.
    pub fn replace(c: *Conversation, messages: []Message) AppendError!void {
        if (c.journal) |j| try j.replace(messages);
        for (c.messages.items) |m| freeMessage(c.gpa, m);
        c.messages.deinit(c.gpa);
        c.messages = .fromOwnedSlice(messages);
        c.stale_usage_before = 0;
        c.stale_usage_before = 0;
    }

    /// Writes the messages as the "messages" array of an export (conversation_json.zig).
    pub fn writeJson(c: *const Conversation, w: *std.Io.Writer) std.Io.Writer.Error!void {
        return @import("conversation_json.zig").writeMessages(w, c.messages.items);
    }
};

/// What an assistant message carries besides its blocks (strings borrowed: appendMessage
/// copies them).
pub const Meta = struct {
    stop_reason: StopReason = .none,
    provider: []const u8 = "",
    model: []const u8 = "",
    usage: Usage = .{},
    container: []const u8 = "",
    reasoning_details: []const u8 = "",
    /// A user message: the caller's cache breakpoint (Message.cache).
    cache: bool = false,
};

/// Writes text that is already a JSON value (a tool input) as a value.
pub fn writeRawJson(s: *std.json.Stringify, json: []const u8) std.Io.Writer.Error!void {
    try s.beginWriteRaw();
    try s.writer.writeAll(json);
    s.endWriteRaw();
}

/// A copy of `b` whose strings (and parts) `gpa` owns.
pub fn copyBlock(gpa: Allocator, b: Block) Allocator.Error!Block {
    const text = try gpa.dupe(u8, b.text);
    errdefer gpa.free(text);
    const id = try gpa.dupe(u8, b.id);
    errdefer gpa.free(id);
    const name = try gpa.dupe(u8, b.name);
    errdefer gpa.free(name);
    const media_type = try gpa.dupe(u8, b.media_type);
    errdefer gpa.free(media_type);
    const parts = try copyBlocks(gpa, b.parts);
    errdefer freeBlocks(gpa, parts);
    const signature = try gpa.dupe(u8, b.signature);
    errdefer gpa.free(signature);
    return .{ .kind = b.kind, .text = text, .id = id, .name = name, .media_type = media_type, .parts = parts, .width = b.width, .height = b.height, .is_error = b.is_error, .signature = signature, .citations = try gpa.dupe(u8, b.citations) };
}

/// Copies of `blocks`, owned by `gpa` (free with freeBlocks).
pub fn copyBlocks(gpa: Allocator, blocks: []const Block) Allocator.Error![]Block {
    const owned = try gpa.alloc(Block, blocks.len);
    var filled: usize = 0;
    errdefer {
        for (owned[0..filled]) |b| freeBlock(gpa, b);
        gpa.free(owned);
    }
    for (blocks, owned) |b, *o| {
        o.* = try copyBlock(gpa, b);
        filled += 1;
    }
    return owned;
}

pub fn freeBlock(gpa: Allocator, b: Block) void {
    gpa.free(b.text);
    gpa.free(b.id);
    gpa.free(b.name);
    gpa.free(b.media_type);
    freeBlocks(gpa, b.parts);
    gpa.free(b.signature);
    gpa.free(b.citations);
}

pub fn freeBlocks(gpa: Allocator, blocks: []const Block) void {
    for (blocks) |b| freeBlock(gpa, b);
    gpa.free(blocks);
}

pub fn freeMessage(gpa: Allocator, m: Message) void {
    freeBlocks(gpa, m.blocks);
    gpa.free(m.provider);
    gpa.free(m.model);
    gpa.free(m.container);
    gpa.free(m.reasoning_details);
}

pub fn freeMessages(gpa: Allocator, messages: []const Message) void {
    for (messages) |m| freeMessage(gpa, m);
    gpa.free(messages);
}
