//! A fast decoder of the JSON in provider stream events, into the same typed structs that
//! std.json fills. Streams are millions of small objects of a few known shapes; std.json's
//! byte-at-a-time scanner spends most of a turn's CPU on them.
//!
//! The rule that keeps it safe: `parse` either gives exactly what
//! `std.json.parseFromSliceLeaky(T, arena, input, .{ .ignore_unknown_fields = true,
//! .allocate = .alloc_if_needed })` gives, or answers null ("not sure") and the caller asks
//! std.json, whose value or error stands. It is not sure about anything outside the plain
//! common forms: malformed JSON, a duplicate known field, a number where a string is expected
//! (std.json converts some), integers written as floats, negative or out of range, nesting
//! deeper than `max_depth`. So malformed input still fails
//! with std.json's error, and the fast path never has to reproduce one.
//!
//! What it does fully: objects in any field order with unknown fields skipped (and validated,
//! as std.json does), whitespace, null for optionals, strings with every escape including
//! \uXXXX surrogate pairs, UTF-8 validated as std.json does. Strings without escapes are
//! slices of the input (no copy); escaped ones are decoded into the arena.
const std = @import("std");
const Allocator = std.mem.Allocator;

/// How deep unknown values may nest before the decoder leaves them to std.json.
pub const max_depth = 64;

/// The options every provider decoder parses with; `decode` applies them on its fallback.
pub const std_options: std.json.ParseOptions = .{
    .ignore_unknown_fields = true,
    .allocate = .alloc_if_needed,
};

pub const DecodeError = std.json.ParseError(std.json.Scanner);

/// Decodes `input` as a T: the fast path, or std.json when the fast path is not sure.
pub fn decode(comptime T: type, arena: Allocator, input: []const u8) DecodeError!T {
    if (try parse(T, arena, input)) |value| return value;
    return std.json.parseFromSliceLeaky(T, arena, input, std_options);
}

/// The fast path alone: T, or null when std.json must decide.
pub fn parse(comptime T: type, arena: Allocator, input: []const u8) Allocator.Error!?T {
    var d: Decoder = .{ .src = input, .arena = arena };
    const value = d.value(T) catch |err| switch (err) {
        error.Unsure => return null,
        error.OutOfMemory => return error.OutOfMemory,
    };
    d.skipSpace();
    if (d.pos != input.len) return null; // trailing bytes: std.json decides what they are
    return value;
}

const Error = error{ Unsure, OutOfMemory };

const Decoder = struct {
    src: []const u8,
    pos: usize = 0,
    arena: Allocator,
    /// Open arrays and objects of skipped (unknown) values.
    depth: u32 = 0,

    fn value(d: *Decoder, comptime T: type) Error!T {
        d.skipSpace();
        switch (@typeInfo(T)) {
            .optional => |o| {
                if (d.literal("null")) return null;
                return try d.value(o.child);
            },
            .bool => {
                if (d.literal("true")) return true;
                if (d.literal("false")) return false;
                return error.Unsure;
            },
            .int => return d.integer(T),
            .@"struct" => return d.object(T),
            .pointer => |ptr| {
                if (ptr.size != .slice or !ptr.is_const or ptr.sentinel() != null)
                    @compileError("fast_json: unsupported type " ++ @typeName(T));
                if (ptr.child == u8) return d.string();
                return d.array(ptr.child);
            },
            // std.json.Value and the like: rare (error details); std.json decodes them.
            .@"union" => return error.Unsure,
            else => @compileError("fast_json: unsupported type " ++ @typeName(T)),
        }
    }

    fn object(d: *Decoder, comptime T: type) Error!T {
        const fields = @typeInfo(T).@"struct".fields;
        comptime {
            if (fields.len > 64) @compileError("fast_json: too many fields in " ++ @typeName(T));
            // Missing fields take their defaults, as in std.json; a type without defaults
            // would need MissingField errors, which this decoder leaves to std.json anyway.
            for (fields) |f| if (f.defaultValue() == null)
                @compileError("fast_json: field " ++ f.name ++ " of " ++ @typeName(T) ++ " needs a default");
        }
        if (!d.eat('{')) return error.Unsure;
        var r: T = .{};
        var seen: u64 = 0;
        d.skipSpace();
        if (d.eat('}')) return r;
        while (true) {
            d.skipSpace();
            // Unescaped, as std.json compares keys (an escaped key may spell a known field).
            const key = try d.string();
            d.skipSpace();
            if (!d.eat(':')) return error.Unsure;
            matched: {
                inline for (fields, 0..) |f, i| {
                    if (key.len == f.name.len and std.mem.eql(u8, key, f.name)) {
                        const bit = @as(u64, 1) << i;
                        if (seen & bit != 0) return error.Unsure; // std.json: DuplicateField
                        seen |= bit;
                        @field(r, f.name) = try d.value(f.type);
                        break :matched;
                    }
                }
                try d.skipValue();
            }
            d.skipSpace();
            if (d.eat(',')) continue;
            if (d.eat('}')) return r;
            return error.Unsure;
        }
    }

    fn array(d: *Decoder, comptime Child: type) Error![]const Child {
        if (!d.eat('[')) return error.Unsure;
        d.skipSpace();
        if (d.eat(']')) return &.{};
        var list: std.ArrayList(Child) = .empty;
        while (true) {
            try list.append(d.arena, try d.value(Child));
            d.skipSpace();
            if (d.eat(',')) continue;
            if (d.eat(']')) return list.items;
            return error.Unsure;
        }
    }

    /// A non-negative integer in its plain JSON form (`0`, `17`); std.json decides the rest
    /// (negative numbers, fractions and exponents, which it converts when integral).
    fn integer(d: *Decoder, comptime T: type) Error!T {
        const s = d.src;
        var i = d.pos;
        if (i >= s.len or !isDigit(s[i])) return error.Unsure;
        var n: T = 0;
        if (s[i] == '0') {
            i += 1;
        } else {
            while (i < s.len and isDigit(s[i])) : (i += 1) {
                n = std.math.mul(T, n, 10) catch return error.Unsure;
                n = std.math.add(T, n, s[i] - '0') catch return error.Unsure;
            }
        }
        // A fraction or exponent follows: a float-formatted integer, for std.json.
        if (i < s.len and (s[i] == '.' or s[i] == 'e' or s[i] == 'E' or isDigit(s[i]))) return error.Unsure;
        d.pos = i;
        return n;
    }

    /// A string value: a slice of the input, or decoded into the arena when it has escapes.
    fn string(d: *Decoder) Error![]const u8 {
        if (!d.eat('"')) return error.Unsure;
        const start = d.pos;
        const escaped = try d.stringEnd();
        const raw = d.src[start..d.pos];
        d.pos += 1; // the closing quote
        if (!escaped) return raw;
        const out = try d.arena.alloc(u8, raw.len); // decoding never makes a string longer
        return out[0..unescape(raw, out)];
    }

    /// Validates a string's content from `pos` (after its opening quote) up to its closing
    /// quote, where it leaves `pos`. Says whether it holds escapes.
    fn stringEnd(d: *Decoder) Error!bool {
        const s = d.src;
        var escaped = false;
        var i = d.pos;
        while (true) {
            i = findSpecial(s, i) orelse return error.Unsure;
            switch (s[i]) {
                '"' => break,
                '\\' => {
                    escaped = true;
                    i += try escapeLength(s[i..]);
                },
                0x80...0xff => i += try utf8Length(s[i..]),
                else => return error.Unsure, // a control character: std.json refuses it
            }
        }
        d.pos = i;
        return escaped;
    }

    /// Skips a value of a field nobody reads, checking it is valid JSON as std.json does.
    fn skipValue(d: *Decoder) Error!void {
        d.skipSpace();
        if (d.pos >= d.src.len) return error.Unsure;
        switch (d.src[d.pos]) {
            '"' => {
                d.pos += 1;
                _ = try d.stringEnd();
                d.pos += 1;
            },
            '{' => {
                d.pos += 1;
                try d.enter();
                d.skipSpace();
                if (!d.eat('}')) while (true) {
                    d.skipSpace();
                    if (!d.eat('"')) return error.Unsure;
                    _ = try d.stringEnd(); // keys of skipped objects may be any string
                    d.pos += 1;
                    d.skipSpace();
                    if (!d.eat(':')) return error.Unsure;
                    try d.skipValue();
                    d.skipSpace();
                    if (d.eat(',')) continue;
                    if (d.eat('}')) break;
                    return error.Unsure;
                };
                d.depth -= 1;
            },
            '[' => {
                d.pos += 1;
                try d.enter();
                d.skipSpace();
                if (!d.eat(']')) while (true) {
                    try d.skipValue();
                    d.skipSpace();
                    if (d.eat(',')) continue;
                    if (d.eat(']')) break;
                    return error.Unsure;
                };
                d.depth -= 1;
            },
            't' => if (!d.literal("true")) return error.Unsure,
            'f' => if (!d.literal("false")) return error.Unsure,
            'n' => if (!d.literal("null")) return error.Unsure,
            '-', '0'...'9' => try d.skipNumber(),
            else => return error.Unsure,
        }
    }

    fn enter(d: *Decoder) Error!void {
        d.depth += 1;
        if (d.depth > max_depth) return error.Unsure;
    }

    /// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
    fn skipNumber(d: *Decoder) Error!void {
        const s = d.src;
        var i = d.pos;
        if (s[i] == '-') i += 1;
        if (i >= s.len or !isDigit(s[i])) return error.Unsure;
        if (s[i] == '0') i += 1 else i = skipDigits(s, i);
        if (i < s.len and s[i] == '.') {
            i += 1;
            if (i >= s.len or !isDigit(s[i])) return error.Unsure;
            i = skipDigits(s, i);
        }
        if (i < s.len and (s[i] == 'e' or s[i] == 'E')) {
            i += 1;
            if (i < s.len and (s[i] == '+' or s[i] == '-')) i += 1;
            if (i >= s.len or !isDigit(s[i])) return error.Unsure;
            i = skipDigits(s, i);
        }
        // What follows must end the value; the caller's `,` `}` `]` check sees to it.
        d.pos = i;
    }

    fn literal(d: *Decoder, comptime word: []const u8) bool {
        if (!std.mem.startsWith(u8, d.src[d.pos..], word)) return false;
        d.pos += word.len;
        return true;
    }

    fn eat(d: *Decoder, ch: u8) bool {
        if (d.pos < d.src.len and d.src[d.pos] == ch) {
            d.pos += 1;
            return true;
        }
        return false;
    }

    fn skipSpace(d: *Decoder) void {
        while (d.pos < d.src.len) : (d.pos += 1) switch (d.src[d.pos]) {
            ' ', '\t', '\n', '\r' => {},
            else => return,
        };
    }
};

fn isDigit(ch: u8) bool {
    return ch >= '0' and ch <= '9';
}

fn skipDigits(s: []const u8, from: usize) usize {
    var i = from;
    while (i < s.len and isDigit(s[i])) i += 1;
    return i;
}

/// The index of the first byte at or after `from` that a string scan must look at: a quote,
/// a backslash, a control character or a non-ASCII byte. Sixteen bytes at a time.
fn findSpecial(s: []const u8, from: usize) ?usize {
    const V = @Vector(16, u8);
    var i = from;
    while (i + 16 <= s.len) : (i += 16) {
        const v: V = s[i..][0..16].*;
        const quote: u16 = @bitCast(v == @as(V, @splat('"')));
        const backslash: u16 = @bitCast(v == @as(V, @splat('\\')));
        const control: u16 = @bitCast(v < @as(V, @splat(0x20)));
        const high: u16 = @bitCast(v >= @as(V, @splat(0x80)));
        const hits = quote | backslash | control | high;
        if (hits != 0) return i + @ctz(hits);
    }
    while (i < s.len) : (i += 1) switch (s[i]) {
        '"', '\\', 0...0x1f, 0x80...0xff => return i,
        else => {},
    };
    return null;
}

/// The length of the valid escape at the start of `s` (a backslash), 12 for a surrogate pair.
fn escapeLength(s: []const u8) Error!usize {
    if (s.len < 2) return error.Unsure;
    switch (s[1]) {
        '"', '\\', '/', 'b', 'f', 'n', 'r', 't' => return 2,
        'u' => {
            const unit = try hex4(s[2..]);
            if (std.unicode.utf16IsLowSurrogate(unit)) return error.Unsure; // unpaired
            if (!std.unicode.utf16IsHighSurrogate(unit)) return 6;
            // std.json wants the low half right after, as another \u escape.
            if (s.len < 8 or s[6] != '\\' or s[7] != 'u') return error.Unsure;
            if (!std.unicode.utf16IsLowSurrogate(try hex4(s[8..]))) return error.Unsure;
            return 12;
        },
        else => return error.Unsure,
    }
}

fn hex4(s: []const u8) Error!u16 {
    if (s.len < 4) return error.Unsure;
    var n: u16 = 0;
    for (s[0..4]) |ch| {
        const digit: u16 = switch (ch) {
            '0'...'9' => ch - '0',
            'a'...'f' => ch - 'a' + 10,
            'A'...'F' => ch - 'A' + 10,
            else => return error.Unsure,
        };
        n = n * 16 + digit;
    }
    return n;
}

/// The length of the valid UTF-8 sequence at the start of `s`: no overlong forms, no
/// surrogates, nothing above U+10FFFF (the same rules as std.json's scanner).
fn utf8Length(s: []const u8) Error!usize {
    const len = std.unicode.utf8ByteSequenceLength(s[0]) catch return error.Unsure;
    if (len > s.len) return error.Unsure;
    _ = std.unicode.utf8Decode(s[0..len]) catch return error.Unsure;
    return len;
}

/// Decodes the content of a validated string into `out` (at least as long); returns the length.
fn unescape(raw: []const u8, out: []u8) usize {
    var n: usize = 0;
    var i: usize = 0;
    while (i < raw.len) {
        const next = std.mem.indexOfScalarPos(u8, raw, i, '\\') orelse raw.len;
        @memcpy(out[n..][0 .. next - i], raw[i..next]);
        n += next - i;
        i = next;
        if (i == raw.len) break;
        const ch: u8 = switch (raw[i + 1]) {
            '"' => '"',
            '\\' => '\\',
            '/' => '/',
            'b' => 0x08,
            'f' => 0x0c,
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'u' => {
                const unit = hex4(raw[i + 2 ..]) catch unreachable; // validated
                var code_point: u21 = unit;
                i += 6;
                if (std.unicode.utf16IsHighSurrogate(unit)) {
                    const low = hex4(raw[i + 2 ..]) catch unreachable;
                    code_point = std.unicode.utf16DecodeSurrogatePair(&.{ unit, low }) catch unreachable;
                    i += 6;
                }
                n += std.unicode.utf8Encode(code_point, out[n..]) catch unreachable;
                continue;
            },
            else => unreachable, // validated
        };
        out[n] = ch;
        n += 1;
        i += 2;
    }
    return n;
}
