//! The fuzz targets' module root (libpanto/fuzz/README.md). It sits beside src/ so that the
//! targets in fuzz/ may import the core's files directly, internals included.
//!   zig build fuzz  -> the targets' libFuzzer entry points, instrumented (libfuzzer.zig)
//!   zig build test  -> the kept inputs replayed through every target (replay_test.zig)
comptime {
    if (!@import("builtin").is_test) _ = @import("fuzz/libfuzzer.zig");
}

test {
    _ = @import("fuzz/replay_test.zig");
}
