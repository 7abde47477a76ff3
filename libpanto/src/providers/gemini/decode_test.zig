//! The Gemini decoder on byte streams as the API frames them (`data:` lines, one
//! GenerateContentResponse each): text with its signature on the last chunk's empty part,
//! thoughts then signed function calls, finish reasons, usage, errors in the stream.
const std = @import("std");
const gemini = @import("decode.zig");
const sse_transcript = @import("../sse_transcript.zig");

fn expectTranscript(bytes: []const u8, expected: []const u8) !void {
    try sse_transcript.expectTranscript(gemini.Decoder, bytes, expected);
}

test "gemini: text in chunks, the last chunk's empty part carrying the signature, usage with cached and thought tokens" {
    try expectTranscript(
        \\data: {"candidates": [{"content": {"parts": [{"text": "Hel"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 12,"totalTokenCount": 12},"modelVersion": "gemini-2.5-flash","responseId": "r1"}
        \\
        \\data: {"candidates": [{"content": {"parts": [{"text": "lo"}],"role": "model"},"index": 0}],"modelVersion": "gemini-2.5-flash","responseId": "r1"}
        \\
        \\data: {"candidates": [{"content": {"parts": [{"text": "","thoughtSignature": "c2ln"}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 12,"candidatesTokenCount": 2,"cachedContentTokenCount": 4,"thoughtsTokenCount": 7,"totalTokenCount": 21},"modelVersion": "gemini-2.5-flash","responseId": "r1"}
        \\
        \\
    ,
        \\start r1 gemini-2.5-flash
        \\block 0 text
        \\delta 0 Hel
        \\delta 0 lo
        \\complete 0 Hello
        \\end end_turn STOP in=8 out=9 cached=4 reasoning=7
        \\signature 0 c2ln
        \\
    );
}

test "gemini: thoughts, then parallel calls (the first signed) with made ids, end as tool use" {
    try expectTranscript(
        \\data: {"candidates":[{"content":{"parts":[{"text":"Need the ","thought":true}],"role":"model"}}],"responseId":"r2","modelVersion":"gemini-3-flash"}
        \\
        \\data: {"candidates":[{"content":{"parts":[{"text":"weather.","thought":true}],"role":"model"}}],"responseId":"r2","modelVersion":"gemini-3-flash"}
        \\
        \\data: {"candidates":[{"content":{"parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"Q0FM"},{"functionCall":{"name":"get_time","args":{}}}],"role":"model"},"finishReason":"STOP"}],"responseId":"r2","modelVersion":"gemini-3-flash"}
        \\
        \\
    ,
        \\start r2 gemini-3-flash
        \\block 0 thinking
        \\delta 0 Need the 
        \\delta 0 weather.
        \\complete 0 Need the weather.
        \\block 1 tool_call
        \\details 1 call_r2_0 get_weather
        \\delta 1 {"city":"Paris"}
        \\complete 1 {"city":"Paris"}
        \\block 2 tool_call
        \\details 2 call_r2_1 get_time
        \\complete 2 {}
        \\end tool_use STOP in=0 out=0 cached=0 reasoning=0
        \\signature 1 Q0FM
        \\
    );
}

test "gemini: a signed thought, a call's own id kept, text after a call starts a block of its own" {
    try expectTranscript(
        \\data: {"candidates":[{"content":{"parts":[{"text":"Hmm.","thought":true,"thoughtSignature":"VA=="},{"functionCall":{"id":"fc-9","name":"f","args":{"a":1}}},{"text":"Done"}],"role":"model"},"finishReason":"STOP"}]}
        \\
        \\
    ,
        \\start  
        \\block 0 thinking
        \\delta 0 Hmm.
        \\complete 0 Hmm.
        \\block 1 tool_call
        \\details 1 fc-9 f
        \\delta 1 {"a":1}
        \\complete 1 {"a":1}
        \\block 2 text
        \\delta 2 Done
        \\complete 2 Done
        \\end tool_use STOP in=0 out=0 cached=0 reasoning=0
        \\signature 0 VA==
        \\
    );
}

test "gemini: finish reasons: MAX_TOKENS, SAFETY, a malformed call, a blocked prompt; a finishReason with no parts" {
    try expectTranscript(
        \\data: {"candidates":[{"content":{"parts":[{"text":"Once"}],"role":"model"}}]}
        \\
        \\data: {"candidates":[{"finishReason":"MAX_TOKENS"}]}
        \\
        \\
    ,
        \\start  
        \\block 0 text
        \\delta 0 Once
        \\complete 0 Once
        \\end max_tokens MAX_TOKENS in=0 out=0 cached=0 reasoning=0
        \\
    );
    try expectTranscript(
        \\data: {"candidates":[{"finishReason":"SAFETY","safetyRatings":[{"category":"HARM_CATEGORY_DANGEROUS_CONTENT","probability":"HIGH","blocked":true}]}]}
        \\
        \\
    ,
        \\start  
        \\end content_filter SAFETY in=0 out=0 cached=0 reasoning=0
        \\
    );
    try expectTranscript(
        \\data: {"candidates":[{"finishReason":"MALFORMED_FUNCTION_CALL"}]}
        \\
        \\
    ,
        \\start  
        \\end other MALFORMED_FUNCTION_CALL in=0 out=0 cached=0 reasoning=0
        \\
    );
    try expectTranscript(
        \\data: {"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"},"usageMetadata":{"promptTokenCount":5}}
        \\
        \\
    ,
        \\start  
        \\end content_filter PROHIBITED_CONTENT in=5 out=0 cached=0 reasoning=0
        \\
    );
}

test "gemini: usage in a chunk after the finishReason counts; a body cut before a finishReason is a protocol error" {
    try expectTranscript(
        \\data: {"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"finishReason":"STOP"}]}
        \\
        \\data: {"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":1}}
        \\
        \\
    ,
        \\start  
        \\block 0 text
        \\delta 0 Hi
        \\complete 0 Hi
        \\end end_turn STOP in=3 out=1 cached=0 reasoning=0
        \\
    );
    try expectTranscript(
        \\data: {"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"}}]}
        \\
        \\
    ,
        \\start  
        \\block 0 text
        \\delta 0 Hi
        \\error Protocol: the Gemini stream ended before a finishReason
        \\
    );
}

test "gemini: an error object in the stream is the error its status means" {
    try expectTranscript(
        \\data: {"error":{"code":429,"message":"Resource has been exhausted.","status":"RESOURCE_EXHAUSTED"}}
        \\
        \\
    ,
        \\error RateLimit RESOURCE_EXHAUSTED: Resource has been exhausted.
        \\
    );
    try expectTranscript(
        \\data: {"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}
        \\
        \\
    ,
        \\error Overloaded UNAVAILABLE: The model is overloaded.
        \\
    );
}

test "gemini: an error body, alone or in a list" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    const e = gemini.parseErrorBody(arena.allocator(), "{\"error\":{\"code\":400,\"message\":\"API key not valid.\",\"status\":\"INVALID_ARGUMENT\"}}").?;
    try std.testing.expectEqualStrings("INVALID_ARGUMENT", e.type);
    try std.testing.expectEqualStrings("API key not valid.", e.message);
    try std.testing.expectEqual(null, e.kind);
    const k = gemini.parseErrorBody(arena.allocator(), "{\"error\":{\"code\":400,\"message\":\"API key not valid. Please pass a valid API key.\",\"status\":\"INVALID_ARGUMENT\",\"details\":[{\"@type\":\"type.googleapis.com/google.rpc.ErrorInfo\",\"reason\":\"API_KEY_INVALID\",\"domain\":\"googleapis.com\",\"metadata\":{\"service\":\"generativelanguage.googleapis.com\"}}]}}").?;
    try std.testing.expectEqualStrings("INVALID_ARGUMENT", k.type);
    try std.testing.expectEqual(error.Authentication, k.kind.?);
    const l = gemini.parseErrorBody(arena.allocator(), "[{\"error\":{\"code\":429,\"message\":\"Quota.\",\"status\":\"RESOURCE_EXHAUSTED\"}}]").?;
    try std.testing.expectEqualStrings("RESOURCE_EXHAUSTED", l.type);
    try std.testing.expect(gemini.parseErrorBody(arena.allocator(), "<html>") == null);
}
