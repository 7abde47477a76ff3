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
//! deeper than `max_depth`. So malformed input still fails with std.json's error, and the
//! fast path never has to reproduce one.
//!
//! `Shape` reads the hottest events by hand with the same pieces (providers/anthropic/hot.zig,
//! providers/openai/hot.zig); fast_json_test.zig and hot_shapes_test.zig check both against std.json.
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
    var value: T = undefined;
    d.fill(T, &value) catch |err| switch (err) {
        error.Unsure => return null,
        error.OutOfMemory => return error.OutOfMemory,
    };
    d.skipSpace();
    if (d.pos != input.len) return null; // trailing bytes: std.json decides what they are
    return value;
}

/// Reads one shape of document by hand: the bytes a provider always sends around the few
/// values that change (`literal`), or token by token. Values are decoded as `parse` decodes
/// them. For the hottest events, where even `parse` does more work than needed. Any mismatch
/// or invalid JSON answers false or null, and the caller turns to `decode`.
pub const Shape = struct {
    d: Decoder,

    pub fn init(arena: Allocator, input: []const u8) Shape {
        return .{ .d = .{ .src = input, .arena = arena } };
    }

    /// For a document that must lie on one line (SSE data read from the received bytes):
    /// CR and LF are not whitespace, so a document that spans lines fails where it breaks.
    pub fn initOneLine(arena: Allocator, input: []const u8) Shape {
        return .{ .d = .{ .src = input, .arena = arena, .one_line = true } };
    }

    /// Consumes `bytes` if the input goes on with exactly them.
    pub inline fn literal(s: *Shape, comptime bytes: []const u8) bool {
        return s.d.literal(bytes);
    }

    /// A plain non-negative integer.
    pub inline fn integer(s: *Shape, comptime T: type) ?T {
        _ = s.d.peek() catch return null;
        return s.d.integer(T) catch null;
    }

    pub inline fn string(s: *Shape) Allocator.Error!?[]const u8 {
        if (!s.token('"')) return null;
        return s.stringAfterQuote();
    }

    /// A string value whose opening quote was consumed already (as the end of a `literal`).
    pub inline fn stringAfterQuote(s: *Shape) Allocator.Error!?[]const u8 {
        return s.d.stringAfterQuote() catch |err| switch (err) {
            error.Unsure => null,
            error.OutOfMemory => error.OutOfMemory,
        };
    }

    /// The next byte, with no whitespace skipped, is a digit.
    pub inline fn nextIsDigit(s: *const Shape) bool {
        return s.d.pos < s.d.src.len and isDigit(s.d.src[s.d.pos]);
    }

    /// A one-digit integer followed by `after` (not consumed), the common case of an index:
    /// its value, without the general integer's loop. Null for anything else (nothing read).
    pub inline fn digitBefore(s: *Shape, comptime after: u8) ?u8 {
        const d = &s.d;
        if (d.src.len - d.pos < 2 or !isDigit(d.src[d.pos]) or d.src[d.pos + 1] != after) return null;
        d.pos += 1;
        return d.src[d.pos - 1] - '0';
    }

    /// Consumes the structural character `ch` (`{` `}` `[` `]` `,` `:`), after any whitespace.
    pub inline fn token(s: *Shape, ch: u8) bool {
        if ((s.d.peek() catch return false) != ch) return false;
        s.d.pos += 1;
        return true;
    }

    /// An object key and its colon; null when there is none (the object is malformed or
    /// ended: see `token('}')`).
    pub inline fn key(s: *Shape) Allocator.Error!?[]const u8 {
        const k = try s.string() orelse return null;
        return if (s.token(':')) k else null;
    }

    /// Consumes `null`.
    pub inline fn isNull(s: *Shape) bool {
        _ = s.d.peek() catch return false;
        return s.d.literal("null");
    }

    /// Skips any valid value (of a field nobody reads); false when it is not valid.
    pub fn skip(s: *Shape) bool {
        if ((s.d.peek() catch return false) == '"') {
            // A string, nearly always: scanned here, without a call.
            s.d.pos += 1;
            _ = s.d.stringEnd() catch return false;
            s.d.pos += 1;
            return true;
        }
        s.d.skipValue() catch return false;
        return true;
    }

    /// Where the reading is (an offset in the input), to come back to with `rewind`.
    pub fn position(s: *const Shape) usize {
        return s.d.pos;
    }

    /// Goes back (or on) to `pos`, which must be the start of a value or key: from there
    /// the document is read as if from its start.
    pub fn rewind(s: *Shape, pos: usize) void {
        s.d.pos = pos;
    }

    /// Only whitespace is left.
    pub fn end(s: *Shape) bool {
        s.d.skipSpace();
        return s.d.pos == s.d.src.len;
    }
};

/// `key` is `name` (a comparison of known length against constants).
pub inline fn keyIs(key: []const u8, comptime name: []const u8) bool {
    return key.len == name.len and startsWithComptime(key, name);
}

const Error = error{ Unsure, OutOfMemory };

/// Reads values at `pos`. Each reader first finds the value's first byte with `peek`, which
/// skips whitespace (usually none: providers send compact JSON) in one comparison.
const Decoder = struct {
    src: []const u8,
    pos: usize = 0,
    arena: Allocator,
    /// Open arrays and objects of skipped (unknown) values.
    depth: u32 = 0,
    /// CR and LF are not whitespace (Shape.initOneLine).
    one_line: bool = false,

    /// Decodes a value of type T into `out`. Structs are filled in place, field by field:
    /// returned by value, each level would copy them.
    fn fill(d: *Decoder, comptime T: type, out: *T) Error!void {
        switch (@typeInfo(T)) {
            .optional => |o| {
                if (try d.peek() == 'n') {
                    if (!d.literal("null")) return error.Unsure;
                    out.* = null;
                } else if (@typeInfo(o.child) == .@"struct") {
                    out.* = @as(o.child, .{});
                    try d.object(o.child, &out.*.?);
                } else {
                    var v: o.child = undefined;
                    try d.fill(o.child, &v);
                    out.* = v;
                }
            },
            .bool => {
                _ = try d.peek();
                if (d.literal("true")) {
                    out.* = true;
                } else if (d.literal("false")) {
                    out.* = false;
                } else return error.Unsure;
            },
            .int => {
                _ = try d.peek();
                out.* = try d.integer(T);
            },
            .@"struct" => {
                out.* = .{};
                try d.object(T, out);
            },
            .pointer => |ptr| {
                if (ptr.size != .slice or !ptr.is_const or ptr.sentinel() != null)
                    @compileError("fast_json: unsupported type " ++ @typeName(T));
                out.* = if (ptr.child == u8) try d.string() else try d.array(ptr.child);
            },
            // std.json.Value and the like: rare (error details); std.json decodes them.
            .@"union" => return error.Unsure,
            else => @compileError("fast_json: unsupported type " ++ @typeName(T)),
        }
    }

    /// The fields of an object into `r`, which holds T's defaults (std.json's value for a
    /// missing field).
    fn object(d: *Decoder, comptime T: type, r: *T) Error!void {
        const fields = @typeInfo(T).@"struct".fields;
        comptime {
            if (fields.len > 64) @compileError("fast_json: too many fields in " ++ @typeName(T));
            // A field without a default would need std.json's MissingField error.
            for (fields) |f| if (f.defaultValue() == null)
                @compileError("fast_json: field " ++ f.name ++ " of " ++ @typeName(T) ++ " needs a default");
        }
        if (try d.peek() != '{') return error.Unsure;
        d.pos += 1;
        var seen: u64 = 0;
        if (try d.peek() == '}') {
            d.pos += 1;
            return;
        }
        while (true) {
            // Unescaped, as std.json compares keys (an escaped key may spell a known field).
            const key = try d.string();
            if (try d.peek() != ':') return error.Unsure;
            d.pos += 1;
            matched: {
                inline for (fields, 0..) |f, i| {
                    if (key.len == f.name.len and startsWithComptime(key, f.name)) {
                        const bit = @as(u64, 1) << i;
                        if (seen & bit != 0) return error.Unsure; // std.json: DuplicateField
                        seen |= bit;
                        try d.fill(f.type, &@field(r, f.name));
                        break :matched;
                    }
                }
                try d.skipValue();
            }
            switch (try d.take()) {
                ',' => {},
                '}' => return,
                else => return error.Unsure,
            }
        }
    }

    fn array(d: *Decoder, comptime Child: type) Error![]const Child {
        if (try d.peek() != '[') return error.Unsure;
        d.pos += 1;
        if (try d.peek() == ']') {
            d.pos += 1;
            return &.{};
        }
        var first: Child = undefined;
        try d.fill(Child, &first);
        switch (try d.take()) {
            ']' => {
                // One element, the common case (one choice, one tool call): stored without
                // Allocator.alloc, whose memset of safe builds costs more than the parse.
                const one: *Child = @ptrCast(@alignCast(d.arena.rawAlloc(@sizeOf(Child), .of(Child), @returnAddress()) orelse
                    return error.OutOfMemory));
                one.* = first;
                return one[0..1];
            },
            ',' => {},
            else => return error.Unsure,
        }
        var list: std.ArrayList(Child) = .empty;
        try list.append(d.arena, first);
        while (true) {
            try d.fill(Child, try list.addOne(d.arena));
            switch (try d.take()) {
                ',' => {},
                ']' => return list.items,
                else => return error.Unsure,
            }
        }
    }

    /// A non-negative integer in its plain JSON form (`0`, `17`) at `pos`; std.json decides
    /// the rest (negative numbers, fractions and exponents, which it converts when integral).
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
    inline fn string(d: *Decoder) Error![]const u8 {
        if (try d.peek() != '"') return error.Unsure;
        d.pos += 1;
        return d.stringAfterQuote();
    }

    /// A string value from just after its opening quote.
    inline fn stringAfterQuote(d: *Decoder) Error![]const u8 {
        const start = d.pos;
        const escaped = try d.stringEnd();
        const raw = d.src[start..d.pos];
        d.pos += 1; // the closing quote
        if (!escaped) return raw;
        // Decoding never makes a string longer. rawAlloc: Allocator.alloc would first fill
        // the memory with 0xAA in safe builds.
        const out = (d.arena.rawAlloc(raw.len, .of(u8), @returnAddress()) orelse return error.OutOfMemory)[0..raw.len];
        return out[0..unescape(raw, out)];
    }

    /// Validates a string's content from `pos` (after its opening quote) up to its closing
    /// quote, where it leaves `pos`. Says whether it holds escapes. Inline: nearly every
    /// string is plain ASCII, found in one vector scan.
    inline fn stringEnd(d: *Decoder) Error!bool {
        const i = findSpecial(d.src, d.pos) orelse return error.Unsure;
        if (d.src[i] == '"') {
            d.pos = i;
            return false;
        }
        return d.stringEndSlow(i);
    }

    /// The rest of a string from `i`, a byte that is not its closing quote.
    fn stringEndSlow(d: *Decoder, from: usize) Error!bool {
        const s = d.src;
        var escaped = false;
        var i = from;
        while (true) {
            switch (s[i]) {
                '"' => break,
                '\\' => {
                    escaped = true;
                    i += try escapeLength(s[i..]);
                },
                0x80...0xff => i += try utf8Length(s[i..]),
                else => return error.Unsure, // a control character: std.json refuses it
            }
            i = findSpecial(s, i) orelse return error.Unsure;
        }
        d.pos = i;
        return escaped;
    }

    /// Skips a value of a field nobody reads, checking it is valid JSON as std.json does.
    fn skipValue(d: *Decoder) Error!void {
        switch (try d.peek()) {
            '"' => {
                d.pos += 1;
                _ = try d.stringEnd();
                d.pos += 1;
            },
            '{' => {
                d.pos += 1;
                try d.enter();
                if (try d.peek() == '}') {
                    d.pos += 1;
                } else while (true) {
                    if (try d.take() != '"') return error.Unsure;
                    _ = try d.stringEnd(); // keys of skipped objects may be any string
                    d.pos += 1;
                    if (try d.take() != ':') return error.Unsure;
                    try d.skipValue();
                    switch (try d.take()) {
                        ',' => {},
                        '}' => break,
                        else => return error.Unsure,
                    }
                }
                d.depth -= 1;
            },
            '[' => {
                d.pos += 1;
                try d.enter();
                if (try d.peek() == ']') {
                    d.pos += 1;
                } else while (true) {
                    try d.skipValue();
                    switch (try d.take()) {
                        ',' => {},
                        ']' => break,
                        else => return error.Unsure,
                    }
                }
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

    /// Inline: a call costs as much as the comparison (a few vector compares).
    inline fn literal(d: *Decoder, comptime word: []const u8) bool {
        if (d.src.len - d.pos < word.len or !startsWithComptime(d.src[d.pos..], word)) return false;
        d.pos += word.len;
        return true;
    }

    /// The next byte that is not whitespace, left at `pos`; Unsure at the end of the input.
    /// Inline for its common case: no whitespace at all.
    inline fn peek(d: *Decoder) Error!u8 {
        if (d.pos < d.src.len and d.src[d.pos] > ' ') return d.src[d.pos];
        d.skipSpace();
        if (d.pos == d.src.len) return error.Unsure;
        return d.src[d.pos];
    }

    /// `peek`, and the byte consumed.
    inline fn take(d: *Decoder) Error!u8 {
        const ch = try d.peek();
        d.pos += 1;
        return ch;
    }

    fn skipSpace(d: *Decoder) void {
        while (d.pos < d.src.len) : (d.pos += 1) switch (d.src[d.pos]) {
            ' ', '\t' => {},
            '\n', '\r' => if (d.one_line) return,
            else => return,
        };
    }
};

/// `s` (at least as long as `word`) starts with `word`: eight bytes at a time against
/// constants; the rest, or a short word, by overlapping loads that end at its last byte.
inline fn startsWithComptime(s: []const u8, comptime word: []const u8) bool {
    if (word.len >= 16) {
        // Long words (the hot events' fixed parts): 32 bytes at a time, then pieces of 16, 8,
        // 4, 2 and 1 that do not overlap (overlapping loads make LLVM stitch vectors together
        // byte by byte). One bounds check, on the whole word.
        const head: *const [word.len]u8 = s[0..word.len];
        comptime var at: usize = 0;
        inline for (.{ 32, 16, 8, 4, 2, 1 }) |n| {
            inline while (word.len - at >= n) : (at += n) {
                const want: @Vector(n, u8) = comptime word[at..][0..n].*;
                const got: @Vector(n, u8) = head[at..][0..n].*;
                if (!@reduce(.And, got == want)) return false;
            }
        }
        return true;
    }
    inline for (.{ u64, u32, u16 }) |T| {
        const n = @sizeOf(T);
        if (word.len >= n) {
            comptime var i: usize = 0;
            inline while (i + n <= word.len) : (i += n) {
                if (!sameAt(T, s, word, i)) return false;
            }
            if (i < word.len and !sameAt(T, s, word, word.len - n)) return false;
            return true;
        }
    }
    return word.len == 0 or s[0] == word[0];
}

inline fn sameAt(comptime T: type, s: []const u8, comptime word: []const u8, comptime at: usize) bool {
    const n = @sizeOf(T);
    const want = comptime std.mem.readInt(T, word[at..][0..n], .little);
    return std.mem.readInt(T, s[at..][0..n], .little) == want;
}

/// `a` and `b`, of one length, hold the same bytes: 32 at a time.
pub fn sameBytes(a: []const u8, b: []const u8) bool {
    std.debug.assert(a.len == b.len);
    const V = @Vector(32, u8);
    var i: usize = 0;
    while (i + 32 <= a.len) : (i += 32) {
        const x: V = a[i..][0..32].*;
        const y: V = b[i..][0..32].*;
        if (@reduce(.Or, x != y)) return false;
    }
    if (i == a.len) return true;
    if (a.len >= 32) {
        // The rest: the last 32 bytes, overlapping what was compared already.
        const x: V = a[a.len - 32 ..][0..32].*;
        const y: V = b[b.len - 32 ..][0..32].*;
        return !@reduce(.Or, x != y);
    }
    while (i < a.len) : (i += 1) if (a[i] != b[i]) return false;
    return true;
}

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
inline fn findSpecial(s: []const u8, from: usize) ?usize {
    const V = @Vector(16, u8);
    var i = from;
    while (i + 16 <= s.len) : (i += 16) {
        const hits = specialMask(s[i..][0..16].*);
        if (hits != 0) return i + @ctz(hits);
    }
    if (i >= s.len) return null;
    if (s.len >= 16) {
        // Fewer than 16 bytes left: scan the last 16 of `s` and drop what lies before `i`.
        const v: V = s[s.len - 16 ..][0..16].*;
        const hits = specialMask(v) >> @intCast(16 - (s.len - i));
        return if (hits != 0) i + @ctz(hits) else null;
    }
    while (i < s.len) : (i += 1) switch (s[i]) {
        '"', '\\', 0...0x1f, 0x80...0xff => return i,
        else => {},
    };
    return null;
}

/// Bit n is set when byte n is a quote, a backslash, a control character or non-ASCII.
inline fn specialMask(v: @Vector(16, u8)) u16 {
    const V = @Vector(16, u8);
    const quote: u16 = @bitCast(v == @as(V, @splat('"')));
    const backslash: u16 = @bitCast(v == @as(V, @splat('\\')));
    const control: u16 = @bitCast(v < @as(V, @splat(0x20)));
    const high: u16 = @bitCast(v >= @as(V, @splat(0x80)));
    return quote | backslash | control | high;
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

test "startsWithComptime finds a difference at every position of every word length" {
    const word = "abcdefghijklmnopqrstu";
    inline for (0..word.len + 1) |len| {
        const w = word[0..len];
        var buf: [word.len + 8]u8 = undefined;
        @memcpy(buf[0..len], w);
        @memset(buf[len..], 'z');
        try std.testing.expect(startsWithComptime(&buf, w));
        for (0..len) |at| {
            buf[at] ^= 0x20;
            try std.testing.expect(!startsWithComptime(&buf, w));
            buf[at] ^= 0x20;
        }
    }
}

test "sameBytes" {
    var a: [100]u8 = undefined;
    for (&a, 0..) |*x, i| x.* = @intCast(i);
    var b = a;
    for (0..a.len + 1) |len| {
        try std.testing.expect(sameBytes(a[0..len], b[0..len]));
        for (0..len) |at| {
            b[at] +%= 1;
            try std.testing.expect(!sameBytes(a[0..len], b[0..len]));
            b[at] -%= 1;
        }
    }
}
