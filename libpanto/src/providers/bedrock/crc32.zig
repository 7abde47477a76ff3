//! CRC-32 (IEEE 802.3, zlib's: reflected polynomial 0xEDB88320), the checksum of every
//! event-stream message (eventstream.zig), read eight bytes at a step ("slicing-by-8", eight
//! 256-entry tables made at compile time). A speed trick only: the same value as
//! std.hash.Crc32, which reads one byte at a step (the tests compare the two), and which the
//! profile of a Bedrock stream found taking most of the framer's time.
const std = @import("std");

const tables: [8][256]u32 = blk: {
    @setEvalBranchQuota(20_000);
    var t: [8][256]u32 = undefined;
    for (0..256) |i| {
        var c: u32 = i;
        for (0..8) |_| c = (c >> 1) ^ (0xEDB88320 & (0 -% (c & 1)));
        t[0][i] = c;
    }
    for (0..256) |i| {
        for (1..8) |k| t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFF];
    }
    break :blk t;
};

pub fn hash(bytes: []const u8) u32 {
    var crc: u32 = 0xFFFFFFFF;
    var i: usize = 0;
    while (i + 8 <= bytes.len) : (i += 8) {
        const lo = std.mem.readInt(u32, bytes[i..][0..4], .little) ^ crc;
        const hi = std.mem.readInt(u32, bytes[i + 4 ..][0..4], .little);
        crc = tables[7][lo & 0xFF] ^ tables[6][(lo >> 8) & 0xFF] ^ tables[5][(lo >> 16) & 0xFF] ^ tables[4][lo >> 24] ^
            tables[3][hi & 0xFF] ^ tables[2][(hi >> 8) & 0xFF] ^ tables[1][(hi >> 16) & 0xFF] ^ tables[0][hi >> 24];
    }
    while (i < bytes.len) : (i += 1) crc = tables[0][(crc ^ bytes[i]) & 0xFF] ^ (crc >> 8);
    return ~crc;
}

test "crc32: the standard library's value for every length, at every alignment" {
    var data: [600]u8 = undefined;
    var prng: std.Random.DefaultPrng = .init(0x5eed);
    prng.random().bytes(&data);
    for (0..8) |offset| {
        var len: usize = 0;
        while (offset + len <= data.len) : (len += 1) {
            const slice = data[offset..][0..len];
            try std.testing.expectEqual(std.hash.Crc32.hash(slice), hash(slice));
        }
    }
    try std.testing.expectEqual(@as(u32, 0xCBF43926), hash("123456789")); // the check value
}
