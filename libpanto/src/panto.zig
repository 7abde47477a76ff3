//! panto: an LLM-agent runtime. An `Agent` holds the configuration and the conversation;
//! `agent.run(text)` returns a `Stream` whose `next()` yields one `Event` at a time.
pub const event = @import("event.zig");
pub const errors = @import("errors.zig");
pub const sse = @import("sse.zig");
pub const config = @import("config.zig");
pub const conversation = @import("conversation.zig");
pub const tools = @import("tools.zig");

pub const Agent = @import("agent.zig").Agent;
pub const Stream = @import("stream.zig").Stream;
pub const Config = config.Config;
pub const Provider = config.Provider;
pub const Event = event.Event;
pub const BlockKind = event.BlockKind;
pub const StopReason = event.StopReason;
pub const Usage = event.Usage;
pub const TurnError = errors.TurnError;

pub const version = "0.1.0";

test {
    @import("std").testing.refAllDecls(@This());
    _ = @import("stream.zig");
    _ = @import("transport.zig");
    _ = @import("stream_read.zig");
    _ = @import("std_http_internals.zig");
    _ = @import("stream_test.zig");
    _ = @import("agent.zig");
    _ = @import("providers.zig");
    _ = @import("providers/anthropic/provider.zig");
    _ = @import("providers/anthropic/request.zig");
    _ = @import("providers/anthropic/decode.zig");
    _ = @import("providers/anthropic/hot.zig");
    _ = @import("providers/openai/provider.zig");
    _ = @import("providers/openai/request.zig");
    _ = @import("providers/openai/decode.zig");
    _ = @import("providers/openai/hot.zig");
    _ = @import("providers/openai/decode_test.zig");
    _ = @import("providers/anthropic/order_test.zig");
    _ = @import("assembly.zig");
    _ = @import("batch.zig");
    _ = @import("schema.zig");
    _ = @import("read_tool.zig");
    _ = @import("tool_round.zig");
    _ = @import("network.zig");
    _ = @import("tunnel.zig");
    _ = @import("dial.zig");
    _ = @import("connect_test.zig");
    _ = @import("resolve.zig");
    _ = @import("resolve_test.zig");
    _ = @import("sockaddr.zig");
    _ = @import("keep_alive.zig");
    _ = @import("keep_alive_test.zig");
    _ = @import("stack_trim.zig");
    _ = @import("stack_trim_test.zig");
    _ = @import("connection_log.zig");
    _ = @import("retry.zig");
    _ = @import("fast_json.zig");
    _ = @import("fast_json_test.zig");
    _ = @import("hot_shapes_test.zig");
    _ = @import("event_arena.zig");
    _ = @import("body.zig");
    _ = @import("json_depth.zig");
    _ = @import("open_beneath.zig");
    _ = @import("utf8.zig");
    _ = @import("errors.zig");
    _ = @import("config.zig");
}
