//! The host's parts that print mode does not reach (slash commands, the report of a raising
//! command or subscriber, capability filtering, ext.exec in place with its timeout and
//! cancel), on a host of its own. tests/cli/ drives the rest through the binary.
const std = @import("std");
const Host = @import("host.zig").Host;

const gpa = std.testing.allocator;

const Fixture = struct {
    report: std.Io.Writer.Allocating,
    host: *Host,

    fn init(f: *Fixture, granted: []const []const u8) !void {
        f.report = .init(gpa);
        f.host = try Host.init(gpa, std.testing.io, .{ .granted = granted, .report = &f.report.writer });
    }

    fn deinit(f: *Fixture) void {
        f.host.deinit(gpa);
        f.report.deinit();
    }

    fn command(f: *Fixture, name: []const u8, args: []const u8) !struct { found: bool, out: []u8 } {
        var out: std.Io.Writer.Allocating = .init(gpa);
        defer out.deinit();
        const found = f.host.runCommand(name, args, &out.writer);
        return .{ .found = found, .out = try gpa.dupe(u8, out.written()) };
    }
};

test "a slash command prints with ctx.print and by returning a string" {
    var f: Fixture = undefined;
    try f.init(&.{});
    defer f.deinit();
    f.host.loadSource("@cmd.lua",
        \\local ext = require("panto").ext
        \\ext.command{name = "hello", description = "Says hello", handler = function(args, ctx)
        \\  ctx.print("hello", args)
        \\  return "bye"
        \\end}
    );
    try std.testing.expectEqualStrings("", f.report.written());
    try std.testing.expectEqual(@as(usize, 1), f.host.commands().len);
    try std.testing.expectEqualStrings("Says hello", f.host.commands()[0].description);
    const r = try f.command("hello", "you there");
    defer gpa.free(r.out);
    try std.testing.expect(r.found);
    try std.testing.expectEqualStrings("hello\tyou there\nbye\n", r.out);
    const none = try f.command("nope", "");
    defer gpa.free(none.out);
    try std.testing.expect(!none.found);
}

test "a command that raises is reported on its output, with its file and line" {
    var f: Fixture = undefined;
    try f.init(&.{});
    defer f.deinit();
    f.host.loadSource("@cmd.lua",
        \\require("panto").ext.command{name = "bad", handler = function()
        \\  local t = nil
        \\  return t.x
        \\end}
    );
    const r = try f.command("bad", "");
    defer gpa.free(r.out);
    try std.testing.expect(r.found);
    try std.testing.expect(std.mem.startsWith(u8, r.out, "command /bad: cmd.lua:3: attempt to index a nil value"));
    try std.testing.expectEqualStrings("", f.report.written());
}

test "a bad command declaration fails its extension's load, with the line" {
    var f: Fixture = undefined;
    try f.init(&.{});
    defer f.deinit();
    f.host.loadSource("@decl.lua",
        \\local ext = require("panto").ext
        \\ext.command{name = "ok", handler = function() end}
        \\ext.command{name = "has space", handler = function() end}
    );
    try std.testing.expect(std.mem.indexOf(u8, f.report.written(), "decl.lua:3: ext.command: 'has space' is not a command name") != null);
    try std.testing.expectEqual(@as(usize, 0), f.host.commands().len); // "ok" went with its file
}

test "tools needing a capability not granted are not offered" {
    var f: Fixture = undefined;
    try f.init(&.{"exec"});
    defer f.deinit();
    f.host.loadBundled();
    try std.testing.expectEqualStrings("", f.report.written());
    try std.testing.expectEqual(@as(usize, 1), f.host.toolSpecs().len);
    try std.testing.expect(std.mem.indexOf(u8, f.host.toolSpecs()[0], "\"name\":\"bash\"") != null);
    try std.testing.expect(f.host.hasTool("bash"));
    try std.testing.expect(!f.host.hasTool("write"));
    try std.testing.expect(!f.host.hasTool("nope"));
}

test "agent events reach ext.on subscribers as tables; bad JSON is reported" {
    var f: Fixture = undefined;
    try f.init(&.{});
    defer f.deinit();
    f.host.loadSource("@on.lua",
        \\local ext = require("panto").ext
        \\ext.on("turn_end", function(data, name)
        \\  ext.command{name = "seen", handler = function() return name .. " " .. data.stop_reason end}
        \\end)
    );
    f.host.emit("turn_end", "{\"stop_reason\":\"end_turn\"}");
    const r = try f.command("seen", "");
    defer gpa.free(r.out);
    try std.testing.expectEqualStrings("turn_end end_turn\n", r.out);
    f.host.emit("turn_end", "{not json");
    try std.testing.expect(std.mem.indexOf(u8, f.report.written(), "panto: event turn_end: invalid JSON") != null);
}

test "ext.exec in a command waits in place; its timeout kills the command" {
    var f: Fixture = undefined;
    try f.init(&.{});
    defer f.deinit();
    f.host.loadSource("@exec.lua",
        \\local ext = require("panto").ext
        \\ext.command{name = "run", handler = function(args)
        \\  local r = ext.exec(args, {timeout = 0.2, max_output = 4})
        \\  return ("%s|%s|%s|%s|%s|%d"):format(tostring(r.status), tostring(r.signal), r.output,
        \\    tostring(r.timed_out), tostring(r.truncated), r.output_bytes)
        \\end}
    );
    const done = try f.command("run", "echo 123456; exit 2");
    defer gpa.free(done.out);
    try std.testing.expectEqualStrings("2|nil|1234|false|true|7\n", done.out);
    const slow = try f.command("run", "sleep 30");
    defer gpa.free(slow.out);
    try std.testing.expectEqualStrings("nil|9||true|false|0\n", slow.out);
}

test "ext.exec runs a list without a shell, in the folder given; one that cannot start is nil, why" {
    var f: Fixture = undefined;
    try f.init(&.{});
    defer f.deinit();
    f.host.loadSource("@list.lua",
        \\local ext = require("panto").ext
        \\ext.command{name = "pwd", handler = function()
        \\  local r = assert(ext.exec({"pwd"}, {cwd = "/"}))
        \\  local none, why = ext.exec({"no-such-program-here"})
        \\  return r.output .. tostring(none) .. " " .. why
        \\end}
    );
    const r = try f.command("pwd", "");
    defer gpa.free(r.out);
    try std.testing.expectEqualStrings("/\nnil cannot start 'no-such-program-here': FileNotFound\n", r.out);
}

test "a cancel kills the command ext.exec waits for" {
    var f: Fixture = undefined;
    try f.init(&.{});
    defer f.deinit();
    f.host.loadSource("@cancel.lua",
        \\local ext = require("panto").ext
        \\ext.command{name = "run", handler = function(args)
        \\  local r = ext.exec(args)
        \\  return tostring(r.canceled) .. " " .. tostring(r.signal)
        \\end}
    );
    // The command cancels itself once it runs (as Ctrl-C would, from another thread).
    const Canceler = struct {
        fn run(h: *Host, marker: []const u8) void {
            while (true) {
                std.Io.Dir.cwd().access(std.testing.io, marker, .{}) catch {
                    std.Io.sleep(std.testing.io, .fromMilliseconds(5), .awake) catch {};
                    continue;
                };
                return h.cancelAsync();
            }
        }
    };
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    const marker = try std.fmt.allocPrint(gpa, ".zig-cache/tmp/{s}/started", .{tmp.sub_path});
    defer gpa.free(marker);
    const thread = try std.Thread.spawn(.{}, Canceler.run, .{ f.host, marker });
    const cmd = try std.fmt.allocPrint(gpa, "touch {s}; sleep 30", .{marker});
    defer gpa.free(cmd);
    const r = try f.command("run", cmd);
    thread.join();
    defer gpa.free(r.out);
    try std.testing.expectEqualStrings("true 9\n", r.out);
    // A cancel that came while nothing ran is spent when the next turn starts: a subscriber
    // of turn_start runs its command to the end.
    f.host.loadSource("@quick.lua",
        \\local ext = require("panto").ext
        \\local seen = "none"
        \\ext.on("turn_start", function()
        \\  local r = ext.exec("exit 0")
        \\  seen = tostring(r.canceled) .. " " .. tostring(r.status)
        \\end)
        \\ext.command{name = "quick", handler = function() return seen end}
    );
    f.host.cancelAsync();
    f.host.emit("turn_start", "{\"input\":\"next\"}");
    const q = try f.command("quick", "");
    defer gpa.free(q.out);
    try std.testing.expectEqualStrings("false 0\n", q.out);
}
