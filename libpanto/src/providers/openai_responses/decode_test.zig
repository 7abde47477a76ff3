//! The Responses decoder on byte streams as the API frames them (`event:` and `data:` lines):
//! text, a function call, reasoning with its encrypted content, a response cut by
//! max_output_tokens, a failed response and an error event.
const std = @import("std");
const responses = @import("decode.zig");
const sse_transcript = @import("../sse_transcript.zig");

fn expectTranscript(bytes: []const u8, expected: []const u8) !void {
    try sse_transcript.expectTranscript(responses.Decoder, bytes, expected);
}

const created =
    \\event: response.created
    \\data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","model":"gpt-5","output":[],"usage":null}}
    \\
    \\event: response.in_progress
    \\data: {"type":"response.in_progress","sequence_number":1,"response":{"id":"resp_1","object":"response","status":"in_progress","model":"gpt-5","output":[]}}
    \\
    \\
;

test "responses: text, its .done longer than the deltas, usage with cached and reasoning tokens" {
    try expectTranscript(created ++
        \\event: response.output_item.added
        \\data: {"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}}
        \\
        \\event: response.content_part.added
        \\data: {"type":"response.content_part.added","item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}}
        \\
        \\event: response.output_text.delta
        \\data: {"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hel","logprobs":[]}
        \\
        \\event: response.output_text.delta
        \\data: {"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"lo","logprobs":[]}
        \\
        \\event: response.output_text.done
        \\data: {"type":"response.output_text.done","item_id":"msg_1","output_index":0,"content_index":0,"text":"Hello!","logprobs":[]}
        \\
        \\event: response.output_item.done
        \\data: {"type":"response.output_item.done","output_index":0,"item":{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hello!","annotations":[]}]}}
        \\
        \\event: response.completed
        \\data: {"type":"response.completed","response":{"id":"resp_1","status":"completed","model":"gpt-5","incomplete_details":null,"error":null,"usage":{"input_tokens":30,"input_tokens_details":{"cached_tokens":20},"output_tokens":12,"output_tokens_details":{"reasoning_tokens":4},"total_tokens":42}}}
        \\
        \\
    ,
        \\start resp_1 gpt-5
        \\block 0 text
        \\delta 0 Hel
        \\delta 0 lo
        \\delta 0 !
        \\complete 0 Hello!
        \\end end_turn completed in=10 out=12 cached=20 reasoning=4
        \\
    );
}

test "responses: reasoning keeps the last encrypted content and its item id; a function call ends in tool use" {
    try expectTranscript(created ++
        \\event: response.output_item.added
        \\data: {"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"stale"}}
        \\
        \\event: response.reasoning_summary_part.added
        \\data: {"type":"response.reasoning_summary_part.added","item_id":"rs_1","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}}
        \\
        \\event: response.reasoning_summary_text.delta
        \\data: {"type":"response.reasoning_summary_text.delta","item_id":"rs_1","output_index":0,"summary_index":0,"delta":"Weather first."}
        \\
        \\event: response.reasoning_summary_part.added
        \\data: {"type":"response.reasoning_summary_part.added","item_id":"rs_1","output_index":0,"summary_index":1,"part":{"type":"summary_text","text":""}}
        \\
        \\event: response.reasoning_summary_text.delta
        \\data: {"type":"response.reasoning_summary_text.delta","item_id":"rs_1","output_index":0,"summary_index":1,"delta":"Then answer."}
        \\
        \\event: response.output_item.done
        \\data: {"type":"response.output_item.done","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Weather first."},{"type":"summary_text","text":"Then answer."}],"encrypted_content":"gAAAA-fresh="}}
        \\
        \\event: response.output_item.added
        \\data: {"type":"response.output_item.added","output_index":1,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_a","name":"get_weather"}}
        \\
        \\event: response.function_call_arguments.delta
        \\data: {"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":1,"delta":"{\"city\":"}
        \\
        \\event: response.function_call_arguments.delta
        \\data: {"type":"response.function_call_arguments.delta","item_id":"fc_OTHER","output_index":1,"delta":"\"Paris\"}"}
        \\
        \\event: response.function_call_arguments.done
        \\data: {"type":"response.function_call_arguments.done","item_id":"fc_1","output_index":1,"arguments":"{\"city\":\"Paris\"}"}
        \\
        \\event: response.output_item.done
        \\data: {"type":"response.output_item.done","output_index":1,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"{\"city\":\"Paris\"}","call_id":"call_a","name":"get_weather"}}
        \\
        \\event: response.completed
        \\data: {"type":"response.completed","response":{"id":"resp_1","status":"completed","model":"gpt-5","usage":{"input_tokens":5,"output_tokens":9}}}
        \\
        \\
    ,
        \\start resp_1 gpt-5
        \\block 0 thinking
        \\delta 0 Weather first.
        \\delta 0 
        \\
        \\
        \\delta 0 Then answer.
        \\complete 0 Weather first.
        \\
        \\Then answer.
        \\block 1 tool_call
        \\details 1 call_a get_weather
        \\delta 1 {"city":
        \\delta 1 "Paris"}
        \\complete 1 {"city":"Paris"}
        \\end tool_use completed in=5 out=9 cached=0 reasoning=0
        \\signature 0 rs_1 gAAAA-fresh=
        \\
    );
}

test "responses: incomplete at max_output_tokens in a call is a max-tokens stop" {
    try expectTranscript(created ++
        \\event: response.output_item.added
        \\data: {"type":"response.output_item.added","output_index":0,"item":{"id":"fc_1","type":"function_call","arguments":"","call_id":"call_a","name":"get_weather"}}
        \\
        \\event: response.function_call_arguments.delta
        \\data: {"type":"response.function_call_arguments.delta","output_index":0,"delta":"{\"ci"}
        \\
        \\event: response.incomplete
        \\data: {"type":"response.incomplete","response":{"id":"resp_1","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":5,"output_tokens":16}}}
        \\
        \\
    ,
        \\start resp_1 gpt-5
        \\block 0 tool_call
        \\details 0 call_a get_weather
        \\delta 0 {"ci
        \\complete 0 {"ci
        \\end max_tokens max_output_tokens in=5 out=16 cached=0 reasoning=0
        \\
    );
}

test "responses: a failed response and an error event are typed errors; a stream without its end is cut short" {
    try expectTranscript(created ++
        \\event: response.failed
        \\data: {"type":"response.failed","response":{"id":"resp_1","status":"failed","error":{"code":"rate_limit_exceeded","message":"Slow down."}}}
        \\
        \\
    ,
        \\start resp_1 gpt-5
        \\error RateLimit rate_limit_exceeded: Slow down.
        \\
    );
    try expectTranscript(created ++
        \\event: error
        \\data: {"type":"error","code":"server_error","message":"Something broke.","param":null,"sequence_number":2}
        \\
        \\
    ,
        \\start resp_1 gpt-5
        \\error Server server_error: Something broke.
        \\
    );
    try expectTranscript(
        \\event: response.output_text.delta
        \\data: {"type":"response.output_text.delta","output_index":0,"delta":"Hi"}
        \\
        \\
    ,
        \\error Protocol protocol_error: response.output_text.delta before response.created
        \\
    );
    try expectTranscript(created ++
        \\event: response.output_text.delta
        \\data: {"type":"response.output_text.delta","output_index":0,"delta":"Hi"}
        \\
        \\
    ,
        \\start resp_1 gpt-5
        \\block 0 text
        \\delta 0 Hi
        \\error Protocol: the Responses stream ended before response.completed
        \\
    );
}
