//! A response body from memory that arrives `step` bytes per read, as from a network at some
//! speed: what a fuzz target hands a Stream in place of its connection's body reader.
const std = @import("std");

pub const StepReader = struct {
    interface: std.Io.Reader,
    rest: []const u8,
    step: usize,

    /// Reads into `buffer` (a Stream's body buffer, which it may swap for a larger one).
    pub fn init(bytes: []const u8, step: usize, buffer: []u8) StepReader {
        return .{
            .interface = .{ .buffer = buffer, .seek = 0, .end = 0, .vtable = &.{ .stream = stream, .readVec = readVec } },
            .rest = bytes,
            .step = @max(step, 1),
        };
    }

    fn readVec(r: *std.Io.Reader, _: [][]u8) std.Io.Reader.Error!usize {
        const s: *StepReader = @fieldParentPtr("interface", r);
        if (s.rest.len == 0) return error.EndOfStream;
        const n = @min(s.step, s.rest.len, r.buffer.len - r.end);
        @memcpy(r.buffer[r.end..][0..n], s.rest[0..n]);
        r.end += n;
        s.rest = s.rest[n..];
        return 0;
    }

    fn stream(r: *std.Io.Reader, w: *std.Io.Writer, limit: std.Io.Limit) std.Io.Reader.StreamError!usize {
        const s: *StepReader = @fieldParentPtr("interface", r);
        if (s.rest.len == 0) return error.EndOfStream;
        const dest = limit.slice(try w.writableSliceGreedy(1));
        const n = @min(s.step, s.rest.len, dest.len);
        @memcpy(dest[0..n], s.rest[0..n]);
        w.advance(n);
        s.rest = s.rest[n..];
        return n;
    }
};
