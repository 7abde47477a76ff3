//! The Zig side of the codec shims (codec.h): their declarations, and the allocation sink that
//! lets C write decoded pixels and encodings into memory of the gpa given to `media.fit`.
const std = @import("std");
const Allocator = std.mem.Allocator;
const Image = @import("Image.zig");

pub const Shape = extern struct { width: u32, height: u32, channels: u32 };

pub const ok = 0;
pub const corrupt = 1;
pub const no_memory = 2;
pub const too_large = 3;

const AllocFn = *const fn (ctx: ?*anyopaque, size: usize) callconv(.c) ?[*]u8;

pub extern fn panto_png_decode(data: [*]const u8, len: usize, max_pixels: u64, alloc: AllocFn, ctx: ?*anyopaque, out: *Shape) c_int;
pub extern fn panto_png_encode(pixels: [*]const u8, shape: Shape, alloc: AllocFn, ctx: ?*anyopaque, out_len: *usize) c_int;
pub extern fn panto_jpeg_decode(data: [*]const u8, len: usize, max_pixels: u64, want_w: u32, want_h: u32, alloc: AllocFn, ctx: ?*anyopaque, out: *Shape) c_int;
pub extern fn panto_jpeg_encode(pixels: [*]const u8, shape: Shape, quality: c_int, alloc: AllocFn, ctx: ?*anyopaque, out_len: *usize) c_int;
pub extern fn panto_webp_decode(data: [*]const u8, len: usize, max_pixels: u64, want_w: u32, want_h: u32, alloc: AllocFn, ctx: ?*anyopaque, out: *Shape, lossless: *c_int) c_int;
pub extern fn panto_webp_encode(pixels: [*]const u8, shape: Shape, quality: c_int, alloc: AllocFn, ctx: ?*anyopaque, out_len: *usize) c_int;
pub extern fn panto_gif_decode(data: [*]const u8, len: usize, max_pixels: u64, alloc: AllocFn, ctx: ?*anyopaque, out: *Shape) c_int;
pub extern fn panto_resize(in: [*]const u8, in_shape: Shape, out: [*]u8, out_shape: Shape) c_int;

/// How a decode or an encode went wrong. TooLarge: more pixels than allowed (found by the
/// codec; the header checks usually find it first).
pub const Error = error{ OutOfMemory, Corrupt, TooLarge };

/// Memory asked for by one C call (at most one allocation a call), owned by the caller of
/// `take` afterwards; freed by `deinit` when not taken.
pub const Sink = struct {
    gpa: Allocator,
    memory: ?[]u8 = null,

    pub fn alloc(ctx: ?*anyopaque, size: usize) callconv(.c) ?[*]u8 {
        const sink: *Sink = @ptrCast(@alignCast(ctx.?));
        if (sink.memory != null) return null; // the shims ask once
        const memory = sink.gpa.alloc(u8, size) catch return null;
        sink.memory = memory;
        return memory.ptr;
    }

    pub fn deinit(sink: *Sink) void {
        if (sink.memory) |m| sink.gpa.free(m);
        sink.memory = null;
    }

    /// The first `len` bytes, trimmed to exactly that (so `gpa.free` of the slice is right).
    pub fn take(sink: *Sink, len: usize) Allocator.Error![]u8 {
        const memory = sink.memory.?;
        sink.memory = null;
        if (len == memory.len) return memory;
        return sink.gpa.realloc(memory, len) catch |err| {
            sink.gpa.free(memory);
            return err;
        };
    }
};

pub fn check(status: c_int) Error!void {
    return switch (status) {
        ok => {},
        no_memory => error.OutOfMemory,
        too_large => error.TooLarge,
        else => error.Corrupt,
    };
}

/// Runs a decode shim; the pixels it wrote become an Image.
pub fn decoded(sink: *Sink, status: c_int, shape: Shape) Error!Image {
    errdefer sink.deinit();
    try check(status);
    const len = @as(usize, shape.width) * shape.height * shape.channels;
    if (len == 0 or sink.memory == null or sink.memory.?.len < len) return error.Corrupt;
    return .{ .width = shape.width, .height = shape.height, .channels = @intCast(shape.channels), .pixels = try sink.take(len) };
}

/// Runs an encode shim; the encoding it wrote, trimmed.
pub fn encoded(sink: *Sink, status: c_int, len: usize) Error![]u8 {
    errdefer sink.deinit();
    try check(status);
    if (sink.memory == null or len > sink.memory.?.len) return error.Corrupt;
    return sink.take(len);
}
