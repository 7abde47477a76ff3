//! The provider seam: what a provider (one folder under providers/) gives panto, and the table
//! of the providers panto speaks. The rest of the core reaches a provider only through this
//! file: stream.zig, the transport and the config never name one.
//!
//! A provider's folder has a `provider.zig` that declares:
//!   default_base_url, api_key_variables  the public endpoint's base and the environment
//!                                         variables its key is read from
//!   base_url_variables                    the environment variables that replace the
//!                                         public endpoint (as the official SDKs read them)
//!     (either list is read by one rule, `fromEnvironment`: the first variable set and
//!     not empty is read)
//!   endpoint                              the path requests go to (after base_url), or
//!   writeEndpoint(gpa, out, model)          for a path that names the model (Gemini)
//!   writeRequest(w, parts)                the streaming request's JSON body (request.zig's
//!                                         RequestParts: config, conversation, tools)
//!   checkOptions(config, diag)            the request parameters it does not take, its own
//!                                         choices and limits, the body members it writes
//!                                         (request_options.check: the shared rules)
//!   addHeaders(h, parts)                  its own request headers: version, key, betas
//!   parseErrorBody(arena, body)           a non-2xx answer's body, as errors.ProviderError
//!   Decoder                               a struct, `.{}` at each message's start, with
//!     handle(a, arena, event, detail)       one SSE event into the assembly's queue
//!     finish(a, detail)                     the body ended: complete, or cut short
//!   and at most one hot path (a speed trick, beside the logic it speeds up: the decoder
//!   must give the same events without it), reading a whole SSE event from the received
//!   bytes without the SSE parser:
//!     hotEvent(a, arena, bytes, detail, out) -> ?len: an event written into `out`, which
//!                                           the stream hands out at once, skipping the
//!                                           queue (Anthropic deltas)
//!     hotQueued(a, arena, bytes)            -> ?len: the event's events queued (OpenAI chunks)
//!   Null from either: nothing was done, the SSE parser and `handle` read the event.
//! And, for a provider that is not SSE with a key (each has a default):
//!   accept                                the `accept` header and the answer's content
//!                                         type (default `text/event-stream`)
//!   Framer                                the body's framing, when not SSE: a struct with
//!                                         sse.Parser's init, deinit, next, atEventStart,
//!                                         hasBufferedEvent, and `problem` for its
//!                                         error.Framing (the events it gives are sse.Events)
//!   max_temperature                       the highest temperature it takes (default 2)
//!   writeDefaultBaseUrl(gpa, out)         the public endpoint's base, when it depends on
//!                                         the environment (a region), for default_base_url
//!   signRequest(h, signing)               signs the request once its body is written, on
//!                                         every attempt; a provider that signs finds its
//!                                         credentials itself (no api_key is not refused)
//!   error_type_header                     a header of a non-2xx answer that names the
//!                                         error; then parseErrorBody(arena, body, value)
//!                                         takes its value (null when the answer had none)
//! And, for a provider with a token-counting endpoint (token_count.zig; without one, the
//! count is compaction's estimate):
//!   count_endpoint, or                    the counting request's path, constant or naming
//!   writeCountEndpoint(gpa, out, model)     the model
//!   writeCountBody(w, parts)              its JSON body: the turn's request (writeRequest,
//!                                         `parts.purpose` .count), wrapped if the API wants
//!   parseCount(arena, body) -> ?u64       the answer's token count (null: not one)
//! And for the model list (model_list.zig), which every provider has:
//!   writeListPath(gpa, out, cursor)       the list's path and query for a page (cursor:
//!                                         null for the first, else the last page's `next`)
//!   parseModelPage(arena, body)           a page's models and the next page's cursor
//!     -> error{OutOfMemory, NotAPage}!model_list.Page
//!   writeListBaseUrl(gpa, out, base)      the list's base, when not the turns' (Bedrock's
//!                                         control plane)
//! Retry headers (retry-after, retry-after-ms, x-should-retry) and request ids are read by
//! the transport the same way for every provider so far.
//!
//! Adding a provider: its folder, and one line in `registry` (docs/internals.md sketches one).
const std = @import("std");
const Allocator = std.mem.Allocator;
const Assembly = @import("assembly.zig").Assembly;
const errors = @import("errors.zig");
const Event = @import("event.zig").Event;
const EventArena = @import("event_arena.zig").EventArena;
const request = @import("request.zig");
const sse = @import("sse.zig");

/// The providers, by the name the config's "provider" takes.
const registry = struct {
    pub const anthropic = @import("providers/anthropic/provider.zig");
    pub const openai = @import("providers/openai/provider.zig");
    pub const @"openai-responses" = @import("providers/openai_responses/provider.zig");
    pub const gemini = @import("providers/gemini/provider.zig");
    pub const bedrock = @import("providers/bedrock/provider.zig");
};

pub const Provider = std.meta.DeclEnum(registry);

fn api(comptime p: Provider) type {
    return @field(registry, @tagName(p));
}

/// The providers' names for a message, as `"anthropic", "openai", "openai-responses", "gemini" or "bedrock"`.
pub const choices: []const u8 = blk: {
    const names = std.meta.fieldNames(Provider);
    var text: []const u8 = "";
    for (names, 0..) |name, i| {
        const sep = if (i == 0) "" else if (i + 1 == names.len) " or " else ", ";
        text = text ++ sep ++ "\"" ++ name ++ "\"";
    }
    break :blk text;
};

pub fn defaultBaseUrl(p: Provider) []const u8 {
    return switch (p) {
        inline else => |t| api(t).default_base_url,
    };
}

pub fn baseUrlVariables(p: Provider) []const [:0]const u8 {
    return switch (p) {
        inline else => |t| api(t).base_url_variables,
    };
}

pub fn apiKeyVariables(p: Provider) []const [:0]const u8 {
    return switch (p) {
        inline else => |t| api(t).api_key_variables,
    };
}

/// A variable of the environment and its value.
pub const Variable = struct { name: [:0]const u8, value: []const u8 };

/// The first of `names` that is set and not empty, with its value (the environment's
/// memory: copy it).
pub fn fromEnvironment(names: []const [:0]const u8) ?Variable {
    for (names) |name| if (std.c.getenv(name)) |value| {
        const v = std.mem.span(value);
        if (v.len > 0) return .{ .name = name, .value = v };
    };
    return null;
}

/// The variables a message names when none is set: `A`, or `A or B`.
pub fn apiKeyChoices(p: Provider) []const u8 {
    return switch (p) {
        inline else => |t| comptime orList(api(t).api_key_variables),
    };
}

/// The variable a message about the key or base URL from the environment names: the one
/// read, or the choices when none is set.
pub fn variableRead(names: []const [:0]const u8, choices_text: []const u8) []const u8 {
    return if (fromEnvironment(names)) |v| v.name else choices_text;
}

pub fn baseUrlChoices(p: Provider) []const u8 {
    return switch (p) {
        inline else => |t| comptime orList(api(t).base_url_variables),
    };
}

fn orList(comptime names: []const [:0]const u8) []const u8 {
    var text: []const u8 = "";
    for (names, 0..) |name, i| text = text ++ (if (i == 0) "" else " or ") ++ name;
    return text;
}

/// The request parameters provider `p` refuses, and its own ranges and choices.
pub fn checkOptions(p: Provider, config: @import("config.zig").Config, diag: *@import("config.zig").Diagnostic) error{InvalidConfig}!void {
    return switch (p) {
        inline else => |t| api(t).checkOptions(config, diag),
    };
}

pub fn maxTemperature(p: Provider) f64 {
    return switch (p) {
        inline else => |t| if (@hasDecl(api(t), "max_temperature")) api(t).max_temperature else 2,
    };
}

/// Appends the path requests go to for `model`.
pub fn writeEndpoint(p: Provider, gpa: Allocator, out: *std.ArrayList(u8), model: []const u8) Allocator.Error!void {
    switch (p) {
        inline else => |t| if (comptime @hasDecl(api(t), "writeEndpoint"))
            try api(t).writeEndpoint(gpa, out, model)
        else
            try out.appendSlice(gpa, api(t).endpoint),
    }
}

pub fn writeRequest(p: Provider, w: *std.Io.Writer, parts: request.RequestParts) std.Io.Writer.Error!void {
    return switch (p) {
        inline else => |t| api(t).writeRequest(w, parts),
    };
}

pub fn addHeaders(p: Provider, h: *request.Headers, parts: request.RequestParts) Allocator.Error!void {
    return switch (p) {
        inline else => |t| api(t).addHeaders(h, parts),
    };
}

/// The `accept` header's value, which the answer's content type must start with.
pub fn accept(p: Provider) []const u8 {
    return switch (p) {
        inline else => |t| if (comptime @hasDecl(api(t), "accept")) api(t).accept else "text/event-stream",
    };
}

/// Appends the public endpoint's base: the provider's constant, or the one it derives
/// from the environment.
pub fn writeDefaultBaseUrl(p: Provider, gpa: Allocator, out: *std.ArrayList(u8)) Allocator.Error!void {
    switch (p) {
        inline else => |t| if (comptime @hasDecl(api(t), "writeDefaultBaseUrl"))
            try api(t).writeDefaultBaseUrl(gpa, out)
        else
            try out.appendSlice(gpa, api(t).default_base_url),
    }
}

/// Whether the provider signs its requests (signRequest).
pub fn signs(p: Provider) bool {
    return switch (p) {
        inline else => |t| comptime @hasDecl(api(t), "signRequest"),
    };
}

/// Signs the request (headers written, body final), for a provider that does; a no-op else.
pub fn signRequest(p: Provider, h: *request.Headers, signing: request.Signing) request.SignError!void {
    switch (p) {
        inline else => |t| if (comptime @hasDecl(api(t), "signRequest")) try api(t).signRequest(h, signing),
    }
}

/// The header of a non-2xx answer that names the error, for a provider that has one.
pub fn errorTypeHeader(p: Provider) ?[]const u8 {
    return switch (p) {
        inline else => |t| if (comptime @hasDecl(api(t), "error_type_header")) api(t).error_type_header else null,
    };
}

/// A non-2xx answer's body, with the value of its errorTypeHeader (null when it had none).
pub fn parseErrorBody(p: Provider, arena: Allocator, body: []const u8, error_type: ?[]const u8) ?errors.ProviderError {
    return switch (p) {
        inline else => |t| if (comptime @hasDecl(api(t), "error_type_header"))
            api(t).parseErrorBody(arena, body, error_type)
        else
            api(t).parseErrorBody(arena, body),
    };
}

/// Whether the provider has a token-counting endpoint (writeCountBody).
pub fn counts(p: Provider) bool {
    return switch (p) {
        inline else => |t| comptime @hasDecl(api(t), "writeCountBody"),
    };
}

/// Appends the token-counting request's path, for a provider that `counts`.
pub fn writeCountEndpoint(p: Provider, gpa: Allocator, out: *std.ArrayList(u8), model: []const u8) Allocator.Error!void {
    switch (p) {
        inline else => |t| if (comptime @hasDecl(api(t), "writeCountEndpoint"))
            try api(t).writeCountEndpoint(gpa, out, model)
        else if (comptime @hasDecl(api(t), "count_endpoint"))
            try out.appendSlice(gpa, api(t).count_endpoint)
        else
            unreachable, // (callers ask `counts` first)
    }
}

/// The token-counting request's body (`parts.purpose` is .count), for a provider that `counts`.
pub fn writeCountBody(p: Provider, w: *std.Io.Writer, parts: request.RequestParts) std.Io.Writer.Error!void {
    switch (p) {
        inline else => |t| if (comptime @hasDecl(api(t), "writeCountBody")) try api(t).writeCountBody(w, parts) else unreachable,
    }
}

/// The token count of a counting request's answer, or null when it holds none.
pub fn parseCount(p: Provider, arena: Allocator, body: []const u8) ?u64 {
    return switch (p) {
        inline else => |t| if (comptime @hasDecl(api(t), "parseCount")) api(t).parseCount(arena, body) else null,
    };
}

/// Appends the model list's path and query for the page after `cursor` (null: the first).
pub fn writeListPath(p: Provider, gpa: Allocator, out: *std.ArrayList(u8), cursor: ?[]const u8) Allocator.Error!void {
    switch (p) {
        inline else => |t| try api(t).writeListPath(gpa, out, cursor),
    }
}

/// Appends the model list's base: the provider's own (writeListBaseUrl), else `base`.
pub fn writeListBaseUrl(p: Provider, gpa: Allocator, out: *std.ArrayList(u8), base: []const u8) Allocator.Error!void {
    switch (p) {
        inline else => |t| if (comptime @hasDecl(api(t), "writeListBaseUrl"))
            try api(t).writeListBaseUrl(gpa, out, base)
        else
            try out.appendSlice(gpa, base),
    }
}

/// A page of the model list's answer.
pub fn parseModelPage(p: Provider, arena: Allocator, body: []const u8) error{ OutOfMemory, NotAPage }!@import("model_list.zig").Page {
    return switch (p) {
        inline else => |t| api(t).parseModelPage(arena, body),
    };
}

/// The decoder of the message being streamed, whichever its provider.
pub const Decoder = struct {
    impl: Impl,

    const Impl = blk: {
        const tags = std.enums.values(Provider);
        var names: [tags.len][]const u8 = undefined;
        var types: [tags.len]type = undefined;
        for (tags, &names, &types) |t, *name, *T| {
            name.* = @tagName(t);
            T.* = api(t).Decoder;
        }
        break :blk @Union(.auto, Provider, &names, &types, &@splat(.{}));
    };

    /// A fresh decoder, for a message's start.
    pub fn init(p: Provider) Decoder {
        return switch (p) {
            inline else => |t| .{ .impl = @unionInit(Impl, @tagName(t), .{}) },
        };
    }

    pub fn handle(d: *Decoder, a: *Assembly, arena: Allocator, event: sse.Event, detail: *errors.Detail) errors.TurnError!void {
        return switch (d.impl) {
            inline else => |*x| x.handle(a, arena, event, detail),
        };
    }

    pub fn finish(d: *Decoder, a: *Assembly, detail: *errors.Detail) errors.TurnError!void {
        return switch (d.impl) {
            inline else => |*x| x.finish(a, detail),
        };
    }

    /// Whether the provider has a hot event (hotEvent): one compare of the tag, checked
    /// before anything else is done for it.
    pub inline fn hasHotEvent(d: *const Decoder) bool {
        return switch (d.impl) {
            inline else => |x| comptime @hasDecl(@TypeOf(x), "hotEvent"),
        };
    }

    /// Whether the provider has a hot queued event (hotQueued).
    pub inline fn hasHotQueued(d: *const Decoder) bool {
        return switch (d.impl) {
            inline else => |x| comptime @hasDecl(@TypeOf(x), "hotQueued"),
        };
    }

    /// The provider's hot event, when it has one and `bytes` start with it (see above): the
    /// event written into `out`, and the bytes it took. `event_arena` is reset first (here,
    /// after the provider is known: a reset before would make the caller's check of the
    /// provider, hasHotEvent, be made twice).
    pub inline fn hotEvent(d: *Decoder, a: *Assembly, event_arena: *EventArena, arena: Allocator, bytes: []const u8, detail: *errors.Detail, out: *Event) errors.TurnError!?usize {
        switch (d.impl) {
            inline else => |*x| {
                if (comptime !@hasDecl(@TypeOf(x.*), "hotEvent")) return null;
                event_arena.reset();
                return x.hotEvent(a, arena, bytes, detail, out);
            },
        }
    }

    /// The provider's hot queued event, when it has one and `bytes` start with it: the
    /// bytes it took.
    pub inline fn hotQueued(d: *Decoder, a: *Assembly, arena: Allocator, bytes: []const u8) errors.TurnError!?usize {
        switch (d.impl) {
            inline else => |*x| {
                if (comptime !@hasDecl(@TypeOf(x.*), "hotQueued")) return null;
                return x.hotQueued(a, arena, bytes);
            },
        }
    }
};

/// The framing of the body being read, whichever its provider: SSE (sse.Parser) unless the
/// provider declares its `Framer`. Each gives sse.Events, for the Decoder.
pub const Framer = struct {
    impl: Impl,

    fn Of(comptime t: Provider) type {
        return if (@hasDecl(api(t), "Framer")) api(t).Framer else sse.Parser;
    }

    const Impl = blk: {
        const tags = std.enums.values(Provider);
        var names: [tags.len][]const u8 = undefined;
        var types: [tags.len]type = undefined;
        for (tags, &names, &types) |t, *name, *T| {
            name.* = @tagName(t);
            T.* = Of(t);
        }
        break :blk @Union(.auto, Provider, &names, &types, &@splat(.{}));
    };

    pub fn init(p: Provider, gpa: Allocator) Framer {
        return switch (p) {
            inline else => |t| .{ .impl = @unionInit(Impl, @tagName(t), Of(t).init(gpa)) },
        };
    }

    pub fn deinit(f: *Framer) void {
        switch (f.impl) {
            inline else => |*x| x.deinit(),
        }
    }

    /// The next event, or null at the body's end; valid until the next call. A framing
    /// other than SSE fails with error.Framing, its reason in `problem()`.
    pub fn next(f: *Framer, source: anytype) !?sse.Event {
        return switch (f.impl) {
            inline else => |*x| x.next(source),
        };
    }

    /// Why the last `next` failed with error.Framing.
    pub fn problem(f: *const Framer) []const u8 {
        return switch (f.impl) {
            inline else => |*x| if (comptime @hasDecl(@TypeOf(x.*), "problem")) x.problem() else "",
        };
    }

    /// See sse.Parser.atEventStart (the hot paths, SSE's only).
    pub inline fn atEventStart(f: *const Framer) bool {
        return switch (f.impl) {
            inline else => |*x| x.atEventStart(),
        };
    }

    /// Whether `next` would return an event from the bytes received already (see
    /// sse.hasBufferedEvent).
    pub fn hasBufferedEvent(f: *const Framer, source: anytype) bool {
        return switch (f.impl) {
            inline else => |*x| if (comptime @TypeOf(x.*) == sse.Parser) sse.hasBufferedEvent(x, source) else x.hasBufferedEvent(source),
        };
    }
};

test "each provider declares what the seam needs" {
    inline for (comptime std.enums.values(Provider)) |t| {
        const P = api(t);
        inline for (.{ "default_base_url", "base_url_variables", "api_key_variables", "writeRequest", "addHeaders", "parseErrorBody", "Decoder" }) |name| {
            if (!@hasDecl(P, name)) @compileError(@tagName(t) ++ "/provider.zig lacks " ++ name);
        }
        if (@hasDecl(P, "endpoint") == @hasDecl(P, "writeEndpoint")) @compileError(@tagName(t) ++ "/provider.zig declares one of endpoint and writeEndpoint");
        try std.testing.expect(!(@hasDecl(P.Decoder, "hotEvent") and @hasDecl(P.Decoder, "hotQueued")));
        if (@hasDecl(P, "writeCountBody")) {
            if (!@hasDecl(P, "parseCount")) @compileError(@tagName(t) ++ "/provider.zig counts tokens without parseCount");
            if (@hasDecl(P, "count_endpoint") == @hasDecl(P, "writeCountEndpoint")) @compileError(@tagName(t) ++ "/provider.zig declares one of count_endpoint and writeCountEndpoint");
        }
    }
    try std.testing.expectEqualStrings("\"anthropic\", \"openai\", \"openai-responses\", \"gemini\" or \"bedrock\"", choices);
}

extern "c" fn setenv(name: [*:0]const u8, value: [*:0]const u8, overwrite: c_int) c_int;
extern "c" fn unsetenv(name: [*:0]const u8) c_int;

test "a provider's variables: the first set and not empty is read, and messages name it" {
    const names: []const [:0]const u8 = &.{ "PANTO_TEST_FIRST", "PANTO_TEST_SECOND" };
    defer for (names) |n| {
        _ = unsetenv(n);
    };
    try std.testing.expectEqual(null, fromEnvironment(names));
    try std.testing.expectEqualStrings("PANTO_TEST_FIRST or PANTO_TEST_SECOND", variableRead(names, comptime orList(names)));
    _ = setenv("PANTO_TEST_SECOND", "two", 1);
    _ = setenv("PANTO_TEST_FIRST", "", 1); // (empty: as if unset)
    try std.testing.expectEqualStrings("two", fromEnvironment(names).?.value);
    try std.testing.expectEqualStrings("PANTO_TEST_SECOND", variableRead(names, ""));
    _ = setenv("PANTO_TEST_FIRST", "one", 1);
    try std.testing.expectEqualStrings("PANTO_TEST_FIRST", fromEnvironment(names).?.name);
    try std.testing.expectEqualStrings("GOOGLE_API_KEY or GEMINI_API_KEY", apiKeyChoices(.gemini));
    try std.testing.expectEqualStrings("AWS_ENDPOINT_URL_BEDROCK_RUNTIME or AWS_ENDPOINT_URL", baseUrlChoices(.bedrock));
}
