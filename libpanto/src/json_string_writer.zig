//! A writer whose bytes land in another writer as the characters of a JSON string (quotes,
//! backslashes and control characters escaped): for a JSON document an API takes as a string
//! value, written straight into the request instead of into a copy first (Bedrock's
//! structured output schema). UTF-8 passes through byte by byte, so a character split across
//! two writes is escaped the same as whole.
const std = @import("std");
const Writer = std.Io.Writer;

pub const JsonStringWriter = struct {
    out: *Writer,
    interface: Writer,

    /// Writes to `out`, which must be inside a JSON string (after its opening quote).
    /// `buffer` may be empty.
    pub fn init(out: *Writer, buffer: []u8) JsonStringWriter {
        return .{ .out = out, .interface = .{ .vtable = &.{ .drain = drain }, .buffer = buffer } };
    }

    fn drain(w: *Writer, data: []const []const u8, splat: usize) Writer.Error!usize {
        const self: *JsonStringWriter = @alignCast(@fieldParentPtr("interface", w));
        try escape(self.out, w.buffered());
        w.end = 0;
        var consumed: usize = 0;
        for (data[0 .. data.len - 1]) |bytes| {
            try escape(self.out, bytes);
            consumed += bytes.len;
        }
        const last = data[data.len - 1];
        for (0..splat) |_| try escape(self.out, last);
        return consumed + last.len * splat;
    }

    fn escape(out: *Writer, bytes: []const u8) Writer.Error!void {
        return std.json.Stringify.encodeJsonStringChars(bytes, .{}, out);
    }
};

test "a document written through it is the same document as a JSON string, whatever the buffer" {
    const doc = "{\"a\":\"x\\\"y\",\"b\":\"\\u00e9t\xc3\xa9\\n\",\"c\":[1,2]}";
    for ([_]usize{ 0, 1, 3, 64 }) |size| {
        var buf: [64]u8 = undefined;
        var out: std.Io.Writer.Allocating = .init(std.testing.allocator);
        defer out.deinit();
        try out.writer.writeByte('"');
        var w: JsonStringWriter = .init(&out.writer, buf[0..size]);
        for (doc) |c| try w.interface.writeByte(c); // one byte at a time: UTF-8 split too
        try w.interface.flush();
        try out.writer.writeByte('"');
        const back = try std.json.parseFromSlice([]const u8, std.testing.allocator, out.written(), .{});
        defer back.deinit();
        try std.testing.expectEqualStrings(doc, back.value);
    }
}
