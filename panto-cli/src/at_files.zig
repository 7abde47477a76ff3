//! `@path` in a prompt (interactive mode, and print mode's -p PROMPT): each `@` that starts a
//! word and names a file attaches it; `@"my file.txt"` names one with spaces. A text file goes after the prompt's text, fenced, under its path; an image or
//! a PDF (by its first bytes, as a piped one: main.zig) goes as a media part, which the core
//! fits (media.zig). A word naming no readable file stays as it was typed, and is said.
//!
//!     > @notes.txt what is missing?
//!     sent: "@notes.txt what is missing?\n\nnotes.txt:\n```\n...\n```"
const std = @import("std");
const panto = @import("panto");

/// A file larger than this is not attached (a note says so).
pub const max_bytes = 4 << 20;

pub const Expanded = struct {
    arena: std.heap.ArenaAllocator,
    /// The text to send: the prompt, then each text file fenced.
    text: []const u8,
    /// The media parts (images, PDFs), in the order named.
    parts: []const panto.content.Part,
    /// One line per `@word` not attached, and why.
    notes: []const []const u8,

    pub fn deinit(e: *Expanded) void {
        e.arena.deinit();
    }
};

/// `prompt` with its `@path` files attached. Relative paths are from the working directory.
pub fn expand(gpa: std.mem.Allocator, io: std.Io, prompt: []const u8) std.mem.Allocator.Error!Expanded {
    return expandWith(gpa, io, prompt, "");
}

/// As `expand`, with `after` (print mode's piped text, whose `@` words are not the user's)
/// after the prompt and before the files.
pub fn expandWith(gpa: std.mem.Allocator, io: std.Io, prompt: []const u8, after: []const u8) std.mem.Allocator.Error!Expanded {
    var arena: std.heap.ArenaAllocator = .init(gpa);
    errdefer arena.deinit();
    const a = arena.allocator();
    var text: std.ArrayList(u8) = .empty;
    try text.appendSlice(a, prompt);
    try text.appendSlice(a, after);
    var parts: std.ArrayList(panto.content.Part) = .empty;
    var notes: std.ArrayList([]const u8) = .empty;
    var it = Words{ .text = prompt };
    while (it.next()) |path| {
        const bytes = std.Io.Dir.cwd().readFileAlloc(io, path, a, .limited(max_bytes)) catch |err| {
            try notes.append(a, try std.fmt.allocPrint(a, "@{s}: not attached ({s})", .{ path, switch (err) {
                error.FileNotFound => "no such file",
                error.IsDir => "a folder",
                error.StreamTooLong => "larger than 4 MiB",
                error.AccessDenied, error.PermissionDenied => "not readable",
                else => @errorName(err),
            } }));
            continue;
        };
        if (panto.media.detect(bytes)) |format| if (format != .bmp) {
            try parts.append(a, .{ .media = .{ .bytes = bytes } });
            continue;
        };
        if (!std.unicode.utf8ValidateSlice(bytes)) {
            try notes.append(a, try std.fmt.allocPrint(a, "@{s}: not attached (neither text nor an image or PDF)", .{path}));
            continue;
        }
        try appendFenced(a, &text, path, bytes);
    }
    return .{ .arena = arena, .text = text.items, .parts = parts.items, .notes = notes.items };
}

/// "\n\nPATH:\n```\nCONTENT\n```", the fence longer than any run of backticks in the content.
fn appendFenced(a: std.mem.Allocator, text: *std.ArrayList(u8), path: []const u8, content: []const u8) !void {
    const fence_len = @import("markdown_export.zig").fenceLength(content);
    try text.print(a, "\n\n{s}:\n", .{path});
    try text.appendNTimes(a, '`', fence_len);
    try text.append(a, '\n');
    try text.appendSlice(a, content);
    if (content.len > 0 and content[content.len - 1] != '\n') try text.append(a, '\n');
    try text.appendNTimes(a, '`', fence_len);
}

/// The paths of the `@` words: an `@` at the start or after whitespace, up to the next
/// whitespace; a trailing `,.;:!?)` is punctuation, not the path's. `@"..."`: the path is
/// what is between the quotes, spaces and all (no closing quote: no path).
const Words = struct {
    text: []const u8,
    i: usize = 0,

    fn next(w: *Words) ?[]const u8 {
        while (w.i < w.text.len) {
            const at = std.mem.indexOfScalarPos(u8, w.text, w.i, '@') orelse return null;
            w.i = at + 1;
            if (at > 0 and !std.ascii.isWhitespace(w.text[at - 1])) continue;
            if (w.i < w.text.len and w.text[w.i] == '"') {
                const close = std.mem.indexOfScalarPos(u8, w.text, w.i + 1, '"') orelse continue;
                const quoted = w.text[w.i + 1 .. close];
                w.i = close + 1;
                if (quoted.len > 0) return quoted;
                continue;
            }
            const end = std.mem.indexOfAnyPos(u8, w.text, w.i, " \t\r\n") orelse w.text.len;
            w.i = end;
            const word = std.mem.trimEnd(u8, w.text[at + 1 .. end], ",.;:!?)");
            if (word.len > 0) return word;
        }
        return null;
    }
};

test "the @ words: at a word's start, punctuation after them left out" {
    var w = Words{ .text = "@a.txt and mail@example.com, see @src/b.zig. @ alone, (@c)" };
    try std.testing.expectEqualStrings("a.txt", w.next().?);
    try std.testing.expectEqualStrings("src/b.zig", w.next().?);
    try std.testing.expectEqual(@as(?[]const u8, null), w.next());
}

test "a quoted @ word: the path with its spaces; no closing quote, no path" {
    var w = Words{ .text = "see @\"my file.txt\", @\"\" and @plain.md then @\"open" };
    try std.testing.expectEqualStrings("my file.txt", w.next().?);
    try std.testing.expectEqualStrings("plain.md", w.next().?);
    try std.testing.expectEqual(@as(?[]const u8, null), w.next());
}

test "a fence longer than the content's backticks" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    var text: std.ArrayList(u8) = .empty;
    try appendFenced(arena.allocator(), &text, "r.md", "a\n```\nb");
    try std.testing.expectEqualStrings("\n\nr.md:\n````\na\n```\nb\n````", text.items);
}
