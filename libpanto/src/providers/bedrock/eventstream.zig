//! A decoder of AWS's `application/vnd.amazon.eventstream` framing, the body of Bedrock's
//! ConverseStream (docs/design/bedrock.md, "The frames").
//!
//! A message is a 12-byte prelude (total length and headers length, u32 big-endian, then the
//! CRC32 of those 8 bytes), the headers, the payload, and the CRC32 of everything before it.
//! The decoder is fed the body in pieces of any size (the network cuts frames anywhere) and
//! hands out whole messages; both CRCs are checked, and every way a frame can be wrong is its
//! own error, which the stream reports as a protocol error.
const std = @import("std");
const Allocator = std.mem.Allocator;
const Crc32 = @import("crc32.zig"); // (std.hash.Crc32's value, eight bytes at a step)

pub const Error = error{
    OutOfMemory,
    /// The prelude's CRC32 does not match its first 8 bytes: the lengths cannot be trusted.
    BadPreludeCrc,
    /// The message's CRC32 does not match its bytes.
    BadMessageCrc,
    /// A length no message can have: shorter than a prelude and a CRC, headers longer than
    /// the message, or longer than AWS's largest message.
    BadLength,
    /// A header that runs past the headers' end, or whose value type is unknown.
    BadHeader,
    /// The body ended inside a message.
    Truncated,
};

/// The prelude (12 bytes) and the message CRC (4 bytes).
const overhead = 16;
/// AWS's largest event-stream message (16 MiB).
pub const max_message_bytes = 16 * 1024 * 1024;

/// One message. Its slices point into the decoder's buffer: valid until the next `push`.
pub const Message = struct {
    /// `:message-type`: "event", "exception" or "error" ("" when absent).
    message_type: []const u8 = "",
    /// `:event-type` of an event, `:exception-type` of an exception, `:error-code` of an error.
    type: []const u8 = "",
    /// `:error-message` of an error message.
    error_message: []const u8 = "",
    payload: []const u8 = "",
};

pub const Decoder = struct {
    gpa: Allocator,
    buffer: std.ArrayList(u8) = .empty,
    /// Where the next message starts in `buffer`: the bytes before it were handed out.
    start: usize = 0,

    pub fn init(gpa: Allocator) Decoder {
        return .{ .gpa = gpa };
    }

    pub fn deinit(d: *Decoder) void {
        d.buffer.deinit(d.gpa);
    }

    /// Takes the next piece of the body. The messages handed out before are no longer valid.
    pub fn push(d: *Decoder, bytes: []const u8) Allocator.Error!void {
        if (d.start > 0) {
            const rest = d.buffer.items.len - d.start;
            std.mem.copyForwards(u8, d.buffer.items[0..rest], d.buffer.items[d.start..]);
            d.buffer.shrinkRetainingCapacity(rest);
            d.start = 0;
        }
        try d.buffer.appendSlice(d.gpa, bytes);
    }

    /// The next whole message received, or null when more bytes are needed.
    pub fn next(d: *Decoder) Error!?Message {
        const bytes = d.buffer.items[d.start..];
        if (bytes.len < 12) return null;
        const total = std.mem.readInt(u32, bytes[0..4], .big);
        const headers_len = std.mem.readInt(u32, bytes[4..8], .big);
        if (Crc32.hash(bytes[0..8]) != std.mem.readInt(u32, bytes[8..12], .big)) return error.BadPreludeCrc;
        if (total < overhead or total > max_message_bytes or headers_len > total - overhead) return error.BadLength;
        if (bytes.len < total) return null;
        const frame = bytes[0..total];
        if (Crc32.hash(frame[0 .. total - 4]) != std.mem.readInt(u32, frame[total - 4 ..][0..4], .big)) return error.BadMessageCrc;
        var message: Message = .{ .payload = frame[12 + headers_len .. total - 4] };
        try readHeaders(frame[12 .. 12 + headers_len], &message);
        d.start += total;
        return message;
    }

    /// The body ended: an error when it ended inside a message.
    pub fn finish(d: *const Decoder) Error!void {
        if (d.buffer.items.len > d.start) return error.Truncated;
    }
};

/// Reads the headers panto uses into `message`, skipping the others (AWS adds some).
fn readHeaders(headers: []const u8, message: *Message) Error!void {
    var i: usize = 0;
    while (i < headers.len) {
        const name_len = headers[i];
        i += 1;
        if (name_len == 0 or headers.len - i < @as(usize, name_len) + 1) return error.BadHeader;
        const name = headers[i..][0..name_len];
        i += name_len;
        const value_type = headers[i];
        i += 1;
        const fixed: usize = switch (value_type) {
            0, 1 => 0, // bool true, bool false: no value
            2 => 1, // byte
            3 => 2, // short
            4 => 4, // int
            5, 8 => 8, // long, timestamp
            9 => 16, // uuid
            6, 7 => { // bytes, string: a u16 length, then the bytes
                if (headers.len - i < 2) return error.BadHeader;
                const len = std.mem.readInt(u16, headers[i..][0..2], .big);
                i += 2;
                if (headers.len - i < len) return error.BadHeader;
                const value = headers[i..][0..len];
                i += len;
                if (value_type == 7) keep(message, name, value);
                continue;
            },
            else => return error.BadHeader,
        };
        if (headers.len - i < fixed) return error.BadHeader;
        i += fixed;
    }
}

fn keep(message: *Message, name: []const u8, value: []const u8) void {
    if (std.mem.eql(u8, name, ":message-type")) {
        message.message_type = value;
    } else if (std.mem.eql(u8, name, ":event-type") or std.mem.eql(u8, name, ":exception-type") or std.mem.eql(u8, name, ":error-code")) {
        message.type = value;
    } else if (std.mem.eql(u8, name, ":error-message")) {
        message.error_message = value;
    }
}
