//! A command line split into words as a POSIX shell splits it, without running anything:
//! blanks separate words; '...' keeps everything as it is; "..." keeps everything but `\"`,
//! `\\`, `\$` and `` \` ``, which lose their backslash; a backslash outside quotes keeps the
//! next character. No expansion ($VAR, ~, globs) and no operators (|, ;, >): `--mcp`'s
//! COMMAND is a program and its arguments, not a script.
const std = @import("std");

pub const Error = error{ UnclosedQuote, TrailingBackslash, OutOfMemory };

pub fn split(arena: std.mem.Allocator, line: []const u8) Error![]const []const u8 {
    var words: std.ArrayList([]const u8) = .empty;
    var word: std.ArrayList(u8) = .empty;
    var in_word = false;
    var i: usize = 0;
    while (i < line.len) : (i += 1) {
        const c = line[i];
        switch (c) {
            ' ', '\t', '\n' => {
                if (in_word) try words.append(arena, try word.toOwnedSlice(arena));
                in_word = false;
            },
            '\'' => {
                const end = std.mem.indexOfScalarPos(u8, line, i + 1, '\'') orelse return error.UnclosedQuote;
                try word.appendSlice(arena, line[i + 1 .. end]);
                in_word = true;
                i = end;
            },
            '"' => {
                i += 1;
                while (true) : (i += 1) {
                    if (i >= line.len) return error.UnclosedQuote;
                    if (line[i] == '"') break;
                    if (line[i] == '\\' and i + 1 < line.len and std.mem.indexOfScalar(u8, "\"\\$`", line[i + 1]) != null) i += 1;
                    try word.append(arena, line[i]);
                }
                in_word = true;
            },
            '\\' => {
                if (i + 1 >= line.len) return error.TrailingBackslash;
                i += 1;
                try word.append(arena, line[i]);
                in_word = true;
            },
            else => {
                try word.append(arena, c);
                in_word = true;
            },
        }
    }
    if (in_word) try words.append(arena, try word.toOwnedSlice(arena));
    return words.items;
}

fn expectWords(line: []const u8, expected: []const []const u8) !void {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    const got = try split(arena.allocator(), line);
    try std.testing.expectEqual(expected.len, got.len);
    for (expected, got) |e, g| try std.testing.expectEqualStrings(e, g);
}

test "words, quotes and backslashes as a shell splits them" {
    try expectWords("npx -y @modelcontextprotocol/server-filesystem /tmp", &.{ "npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp" });
    try expectWords("  python3   server.py  ", &.{ "python3", "server.py" });
    try expectWords("cmd 'a b' \"c d\" e\\ f", &.{ "cmd", "a b", "c d", "e f" });
    try expectWords("x 'it''s' \"say \\\"hi\\\" \\n\"", &.{ "x", "its", "say \"hi\" \\n" });
    try expectWords("'' x", &.{ "", "x" });
    try expectWords("$HOME ~ *", &.{ "$HOME", "~", "*" });
    try expectWords("", &.{});
}

test "an unclosed quote or a last backslash is an error" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    try std.testing.expectError(error.UnclosedQuote, split(arena.allocator(), "cmd 'open"));
    try std.testing.expectError(error.UnclosedQuote, split(arena.allocator(), "cmd \"open"));
    try std.testing.expectError(error.TrailingBackslash, split(arena.allocator(), "cmd \\"));
}
