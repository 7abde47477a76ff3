//! The ConverseStream request writer: a tool round with reasoning, media and a failed tool,
//! reasoning sent back to the model that made it only. (`bedrock` is not registered yet: the
//! config names another provider, and the messages "made by" it stand for Bedrock's own.)
const std = @import("std");
const conversation = @import("../../conversation.zig");
const writeRequest = @import("request.zig").writeRequest;

test "bedrock request: a tool round with reasoning to the same model, without it to another" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try conv.appendCopy(.user, &.{ .{ .kind = .text, .text = "Weather in Paris?" }, .{ .kind = .image, .text = "iVBO", .media_type = "image/png" }, .{ .kind = .document, .text = "JVBE", .media_type = "application/pdf", .name = "forecast" } });
    try conv.appendMessage(.assistant, &.{
        .{ .kind = .thinking, .text = "Look it up.", .signature = "sigT" },
        .{ .kind = .redacted_thinking, .text = "ZW5j" },
        .{ .kind = .text, .text = " " },
        .{ .kind = .tool_call, .id = "tooluse_1", .name = "get_weather", .text = "{\"city\":\"Paris\"}" },
        .{ .kind = .tool_call, .id = "tooluse_2", .name = "get_time", .text = "" },
    }, .{ .provider = "gemini", .model = "m1" });
    try conv.appendCopy(.user, &.{
        .{ .kind = .tool_result, .id = "tooluse_1", .text = "sunny" },
        .{ .kind = .tool_result, .id = "tooluse_2", .text = "no clock", .is_error = true },
    });
    try conv.appendMessage(.assistant, &.{.{ .kind = .text, .text = "Sunny." }}, .{ .provider = "gemini", .model = "m1" });
    try conv.appendUserText("Thanks");

    const schema_json = "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}";
    const tools = [_]@import("../../tools.zig").Tool{
        .{ .name = "get_weather", .description = "Weather.", .schema_json = schema_json, .schema = .null, .capabilities = &.{} },
    };
    const user0 = "{\"role\":\"user\",\"content\":[{\"text\":\"Weather in Paris?\"},{\"image\":{\"format\":\"png\",\"source\":{\"bytes\":\"iVBO\"}}},{\"document\":{\"format\":\"pdf\",\"name\":\"forecast\",\"source\":{\"bytes\":\"JVBE\"}}}]}";
    const calls = "{\"toolUse\":{\"toolUseId\":\"tooluse_1\",\"name\":\"get_weather\",\"input\":{\"city\":\"Paris\"}}},{\"toolUse\":{\"toolUseId\":\"tooluse_2\",\"name\":\"get_time\",\"input\":{}}}";
    const results = "{\"role\":\"user\",\"content\":[{\"toolResult\":{\"toolUseId\":\"tooluse_1\",\"content\":[{\"text\":\"sunny\"}]}},{\"toolResult\":{\"toolUseId\":\"tooluse_2\",\"content\":[{\"text\":\"no clock\"}],\"status\":\"error\"}}]}";
    const rest = ",{\"role\":\"assistant\",\"content\":[{\"text\":\"Sunny.\"}]},{\"role\":\"user\",\"content\":[{\"text\":\"Thanks\"}]}]";
    {
        var out: std.Io.Writer.Allocating = .init(gpa);
        defer out.deinit();
        try writeRequest(&out.writer, .{ .config = .{ .provider = .gemini, .model = "m1", .system = "Be brief.", .request = .{ .tool_choice = .{ .tool = "get_weather" }, .temperature = 0.5, .top_k = 40, .stop = &.{"END"}, .thinking_budget = 2048 } }, .conversation = &conv, .tools = &tools, .granted = &.{} });
        const want = "{\"system\":[{\"text\":\"Be brief.\"}],\"messages\":[" ++ user0 ++
            ",{\"role\":\"assistant\",\"content\":[{\"reasoningContent\":{\"reasoningText\":{\"text\":\"Look it up.\",\"signature\":\"sigT\"}}},{\"reasoningContent\":{\"redactedContent\":\"ZW5j\"}}," ++ calls ++ "]}," ++ results ++ rest ++
            ",\"inferenceConfig\":{\"maxTokens\":4096,\"temperature\":0.5,\"stopSequences\":[\"END\"]}" ++
            ",\"toolConfig\":{\"tools\":[{\"toolSpec\":{\"name\":\"get_weather\",\"description\":\"Weather.\",\"inputSchema\":{\"json\":" ++ schema_json ++ "}}}],\"toolChoice\":{\"tool\":{\"name\":\"get_weather\"}}}" ++
            ",\"additionalModelRequestFields\":{\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":2048},\"top_k\":40}}";
        try std.testing.expectEqualStrings(want, out.written());
    }
    // Another model: the reasoning stays behind; the blank text is never sent.
    {
        var out: std.Io.Writer.Allocating = .init(gpa);
        defer out.deinit();
        try writeRequest(&out.writer, .{ .config = .{ .provider = .gemini, .model = "m2", .request = .{ .tool_choice = .required } }, .conversation = &conv, .tools = &tools, .granted = &.{} });
        const want = "{\"messages\":[" ++ user0 ++ ",{\"role\":\"assistant\",\"content\":[" ++ calls ++ "]}," ++ results ++ rest ++
            ",\"inferenceConfig\":{\"maxTokens\":4096}" ++
            ",\"toolConfig\":{\"tools\":[{\"toolSpec\":{\"name\":\"get_weather\",\"description\":\"Weather.\",\"inputSchema\":{\"json\":" ++ schema_json ++ "}}}],\"toolChoice\":{\"any\":{}}}}";
        try std.testing.expectEqualStrings(want, out.written());
    }
}

test "bedrock request: cache points after the tools, the system prompt and the last message, for the models Bedrock caches for" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    // A marked first question (as a turn's cache_breakpoint leaves it), an answer, a question.
    try conv.appendOwnedMessage(.{ .role = .user, .blocks = try conversation.copyBlocks(gpa, &.{.{ .kind = .text, .text = "Long document." }}), .cache = true });
    try conv.appendMessage(.assistant, &.{.{ .kind = .text, .text = "Read." }}, .{ .provider = "bedrock", .model = "anthropic.claude-test-v1:0" });
    try conv.appendUserText("Summary?");
    const tools = [_]@import("../../tools.zig").Tool{
        .{ .name = "t", .description = "T.", .schema_json = "{}", .schema = .null, .capabilities = &.{} },
    };
    const point = "{\"cachePoint\":{\"type\":\"default\"}}";
    const point_1h = "{\"cachePoint\":{\"type\":\"default\",\"ttl\":\"1h\"}}";
    const body = struct {
        fn of(c: *const conversation.Conversation, model: []const u8, cache: @import("../../config.zig").Cache, tool_list: []const @import("../../tools.zig").Tool) ![]u8 {
            var out: std.Io.Writer.Allocating = .init(std.testing.allocator);
            defer out.deinit();
            try writeRequest(&out.writer, .{ .config = .{ .provider = .bedrock, .model = model, .system = "Sys.", .max_tokens = 9, .request = .{ .cache = cache } }, .conversation = c, .tools = tool_list, .granted = &.{} });
            return out.toOwnedSlice();
        }
    }.of;
    const messages = "\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":\"Long document.\"}," ++ point ++ "]}," ++
        "{\"role\":\"assistant\",\"content\":[{\"text\":\"Read.\"}]},{\"role\":\"user\",\"content\":[{\"text\":\"Summary?\"}," ++ point ++ "]}]";
    // Auto: the tools, the system prompt, the last message and the caller's mark (4 points).
    for ([_][]const u8{ "anthropic.claude-test-v1:0", "us.amazon.nova-pro-v1:0" }) |model| {
        const got = try body(&conv, model, .{}, &tools);
        defer gpa.free(got);
        try std.testing.expectEqualStrings("{\"system\":[{\"text\":\"Sys.\"}," ++ point ++ "]," ++ messages ++
            ",\"inferenceConfig\":{\"maxTokens\":9}" ++
            ",\"toolConfig\":{\"tools\":[{\"toolSpec\":{\"name\":\"t\",\"description\":\"T.\",\"inputSchema\":{\"json\":{}}}}," ++ point ++ "]}}", got);
    }
    // The ttl as set; off: the caller's mark only.
    {
        const got = try body(&conv, "anthropic.claude-test-v1:0", .{ .mode = .off, .ttl = .@"1h" }, &tools);
        defer gpa.free(got);
        try std.testing.expectEqualStrings("{\"system\":[{\"text\":\"Sys.\"}],\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":\"Long document.\"}," ++ point_1h ++ "]}," ++
            "{\"role\":\"assistant\",\"content\":[{\"text\":\"Read.\"}]},{\"role\":\"user\",\"content\":[{\"text\":\"Summary?\"}]}]" ++
            ",\"inferenceConfig\":{\"maxTokens\":9}" ++
            ",\"toolConfig\":{\"tools\":[{\"toolSpec\":{\"name\":\"t\",\"description\":\"T.\",\"inputSchema\":{\"json\":{}}}}]}}", got);
    }
    // A model Bedrock does not cache for (it would refuse the field): no point at all.
    {
        const got = try body(&conv, "meta.llama3-70b-instruct-v1:0", .{}, &tools);
        defer gpa.free(got);
        try std.testing.expectEqual(@as(usize, 0), std.mem.count(u8, got, "cachePoint"));
    }
}

test "bedrock request: a thinking level is Claude's budget for a Claude model, maxTokens above it; another model gets none" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try conv.appendUserText("Hi");
    const Case = struct { model: []const u8, thinking: @import("../../config.zig").Thinking, max_tokens: u32, want: []const u8 };
    const msgs = "{\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":\"Hi\"},{\"cachePoint\":{\"type\":\"default\"}}]}]";
    const llama_msgs = "{\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":\"Hi\"}]}]";
    const cases = [_]Case{
        // medium is 8192: maxTokens 4096 is not above it, so the budget comes on top.
        .{ .model = "us.anthropic.claude-sonnet-4-5-v1:0", .thinking = .medium, .max_tokens = 4096, .want = msgs ++ ",\"inferenceConfig\":{\"maxTokens\":12288},\"additionalModelRequestFields\":{\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":8192}}}" },
        .{ .model = "anthropic.claude-test-v1:0", .thinking = .low, .max_tokens = 32000, .want = msgs ++ ",\"inferenceConfig\":{\"maxTokens\":32000},\"additionalModelRequestFields\":{\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":2048}}}" },
        .{ .model = "anthropic.claude-test-v1:0", .thinking = .off, .max_tokens = 100, .want = msgs ++ ",\"inferenceConfig\":{\"maxTokens\":100}}" },
        .{ .model = "meta.llama3-70b-instruct-v1:0", .thinking = .high, .max_tokens = 100, .want = llama_msgs ++ ",\"inferenceConfig\":{\"maxTokens\":100}}" },
    };
    for (cases) |c| {
        var out: std.Io.Writer.Allocating = .init(gpa);
        defer out.deinit();
        try writeRequest(&out.writer, .{ .config = .{ .provider = .bedrock, .model = c.model, .max_tokens = c.max_tokens, .thinking = c.thinking }, .conversation = &conv, .tools = &.{}, .granted = &.{} });
        try std.testing.expectEqualStrings(c.want, out.written());
    }
}

test "bedrock request: a json_schema response_format is outputConfig.textFormat, the schema closed and sent as a string" {
    const gpa = std.testing.allocator;
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try conv.appendUserText("Weather?");
    const schema_text = "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\",\"description\":\"The \\\"city\\\"\"}},\"required\":[\"city\"]}";
    const parsed = try std.json.parseFromSlice(std.json.Value, gpa, schema_text, .{});
    defer parsed.deinit();
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    try writeRequest(&out.writer, .{ .config = .{ .provider = .bedrock, .model = "meta.llama3-70b-instruct-v1:0", .max_tokens = 9, .request = .{ .response_format = .{ .json_schema = .{ .name = "weather", .schema = schema_text, .parsed = parsed.value } } } }, .conversation = &conv, .tools = &.{}, .granted = &.{} });
    const body = try std.json.parseFromSlice(std.json.Value, gpa, out.written(), .{});
    defer body.deinit();
    const json_schema = body.value.object.get("outputConfig").?.object.get("textFormat").?.object;
    try std.testing.expectEqualStrings("json_schema", json_schema.get("type").?.string);
    const definition = json_schema.get("structure").?.object.get("jsonSchema").?.object;
    try std.testing.expectEqualStrings("weather", definition.get("name").?.string);
    // The schema is a string holding the schema, its object closed.
    try std.testing.expectEqualStrings("{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\",\"description\":\"The \\\"city\\\"\"}},\"required\":[\"city\"],\"additionalProperties\":false}", definition.get("schema").?.string);
}

test "bedrock request: a document's name keeps only what Converse takes" {
    const gpa = std.testing.allocator;
    const cases = [_]struct { []const u8, []const u8 }{
        .{ "forecast", "forecast" },
        .{ "my_notes.pdf", "my-notes-pdf" },
        .{ "  Q3   report (final)\t[v2]\n", "Q3 report (final) [v2]" },
        .{ "r\xc3\xa9sum\xc3\xa9", "r--sum--" },
        .{ "", "document" },
    };
    for (cases) |c| {
        var conv: conversation.Conversation = .init(gpa);
        defer conv.deinit();
        try conv.appendCopy(.user, &.{.{ .kind = .document, .text = "JVBE", .media_type = "application/pdf", .name = c[0] }});
        var out: std.Io.Writer.Allocating = .init(gpa);
        defer out.deinit();
        try writeRequest(&out.writer, .{ .config = .{ .provider = .bedrock, .model = "meta.llama3-70b-instruct-v1:0", .max_tokens = 9 }, .conversation = &conv, .tools = &.{}, .granted = &.{} });
        const want = try std.fmt.allocPrint(gpa, "\"name\":\"{s}\"", .{c[1]});
        defer gpa.free(want);
        std.testing.expect(std.mem.indexOf(u8, out.written(), want) != null) catch |err| {
            std.debug.print("{s} -> {s}\n", .{ c[0], out.written() });
            return err;
        };
    }
    // At most 200 characters.
    var conv: conversation.Conversation = .init(gpa);
    defer conv.deinit();
    try conv.appendCopy(.user, &.{.{ .kind = .document, .text = "JVBE", .media_type = "application/pdf", .name = "x" ** 300 }});
    var out: std.Io.Writer.Allocating = .init(gpa);
    defer out.deinit();
    try writeRequest(&out.writer, .{ .config = .{ .provider = .bedrock, .model = "m", .max_tokens = 9 }, .conversation = &conv, .tools = &.{}, .granted = &.{} });
    try std.testing.expect(std.mem.indexOf(u8, out.written(), "\"name\":\"" ++ "x" ** 200 ++ "\"") != null);
}
