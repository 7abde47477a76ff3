//! The fuzz targets by name (targets.json lists their seed folders): each takes any bytes.
const std = @import("std");
const Context = @import("context.zig").Context;

pub const Run = *const fn (ctx: Context, input: []const u8) anyerror!void;

pub const Target = struct { name: []const u8, run: Run };

pub const all = [_]Target{
    .{ .name = "sse", .run = @import("sse_target.zig").run },
    .{ .name = "anthropic", .run = anthropic },
    .{ .name = "openai", .run = openai },
    .{ .name = "responses", .run = responses },
    .{ .name = "gemini", .run = gemini },
    .{ .name = "bedrock", .run = bedrock },
    .{ .name = "tool_input", .run = @import("tool_input_target.zig").run },
    .{ .name = "config", .run = @import("config_target.zig").run },
    .{ .name = "media", .run = @import("media_target.zig").run },
};

const provider_target = @import("provider_target.zig");

fn anthropic(ctx: Context, input: []const u8) anyerror!void {
    return provider_target.run(ctx, .anthropic, input);
}

fn openai(ctx: Context, input: []const u8) anyerror!void {
    return provider_target.run(ctx, .openai, input);
}

fn responses(ctx: Context, input: []const u8) anyerror!void {
    return provider_target.run(ctx, .@"openai-responses", input);
}

fn gemini(ctx: Context, input: []const u8) anyerror!void {
    return provider_target.run(ctx, .gemini, input);
}

/// The bytes are the body of an `application/vnd.amazon.eventstream` answer: binary frames
/// (prelude, headers, payload, two CRCs), read by the provider's Framer, not SSE.
fn bedrock(ctx: Context, input: []const u8) anyerror!void {
    return provider_target.run(ctx, .bedrock, input);
}

pub fn byName(name: []const u8) ?Target {
    for (all) |t| if (std.mem.eql(u8, t.name, name)) return t;
    return null;
}
