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
