//! `zig build abi-dump`: prints the C ABI as JSON, reflected from the Zig definitions the
//! library is built from (abi.zig, the exports of root.zig), for the bindings' generated
//! mirrors (scripts/gen_abi.py writes bindings-py/panto/_abi.py from it). abi.zig's own test
//! checks it against include/panto.h, so a mirror made from this is checked against the header
//! too.
//!
//! Output: {"abi_version", "structs": [{name, size, align, fields: [{name, type, offset,
//! size}]}], "enums": [{name, values: [{name, value}]}], "functions": [{name, returns,
//! params}]}. Names are the header's (PantoEvent); types are C spellings ("uint32_t",
//! "PantoString", "PantoAgent *", "const char *").
const std = @import("std");
const panto = @import("panto");
const abi = @import("abi.zig");
const exports = @import("root.zig");

/// Enums panto.h takes from the core rather than from abi.zig (abi.zig's test checks them).
const core_enums = .{ .{ "BlockKind", panto.BlockKind }, .{ "StopReason", panto.StopReason }, .{ "ToolFormat", panto.tools.Format } };

pub fn main(init: std.process.Init) !void {
    try std.Io.File.stdout().writeStreamingAll(init.io, comptime dump());
}

fn dump() []const u8 {
    @setEvalBranchQuota(1_000_000);
    var structs: []const u8 = "";
    var enums: []const u8 = "";
    for (@typeInfo(abi).@"struct".decls) |d| {
        const value = @field(abi, d.name);
        if (@TypeOf(value) != type) continue;
        switch (@typeInfo(value)) {
            .@"struct" => |s| if (s.layout == .@"extern") {
                structs = structs ++ (if (structs.len == 0) "" else ",\n  ") ++ structJson(value);
            },
            .@"enum" => enums = enums ++ (if (enums.len == 0) "" else ",\n  ") ++ enumJson(d.name, value),
            else => {},
        }
    }
    for (core_enums) |pair| {
        if (@hasDecl(abi, pair[0])) continue; // abi.zig re-exports it: listed already
        enums = enums ++ ",\n  " ++ enumJson(pair[0], pair[1]);
    }
    var functions: []const u8 = "";
    for (@typeInfo(exports).@"struct".decls) |d| {
        if (!std.mem.startsWith(u8, d.name, "panto_")) continue;
        const info = @typeInfo(@TypeOf(@field(exports, d.name)));
        if (info != .@"fn") continue;
        var params: []const u8 = "";
        for (info.@"fn".params, 0..) |p, i| {
            params = params ++ (if (i == 0) "" else ", ") ++ quote(cType(p.type.?));
        }
        functions = functions ++ (if (functions.len == 0) "" else ",\n  ") ++
            std.fmt.comptimePrint("{{\"name\": \"{s}\", \"returns\": {s}, \"params\": [{s}]}}", .{ d.name, quote(cType(info.@"fn".return_type.?)), params });
    }
    return std.fmt.comptimePrint("{{\"abi_version\": {d},\n \"structs\": [\n  {s}],\n \"enums\": [\n  {s}],\n \"functions\": [\n  {s}]}}\n", .{ abi.abi_version, structs, enums, functions });
}

fn structJson(comptime T: type) []const u8 {
    var fields: []const u8 = "";
    for (@typeInfo(T).@"struct".fields, 0..) |f, i| {
        fields = fields ++ (if (i == 0) "" else ", ") ++ std.fmt.comptimePrint(
            "{{\"name\": \"{s}\", \"type\": {s}, \"offset\": {d}, \"size\": {d}}}",
            .{ f.name, quote(cType(f.type)), @offsetOf(T, f.name), @sizeOf(f.type) },
        );
    }
    return std.fmt.comptimePrint("{{\"name\": \"{s}\", \"size\": {d}, \"align\": {d}, \"fields\": [{s}]}}", .{ cName(T), @sizeOf(T), @alignOf(T), fields });
}

fn enumJson(comptime name: []const u8, comptime E: type) []const u8 {
    var values: []const u8 = "";
    for (@typeInfo(E).@"enum".fields, 0..) |f, i| {
        values = values ++ (if (i == 0) "" else ", ") ++ std.fmt.comptimePrint("{{\"name\": \"{s}\", \"value\": {d}}}", .{ f.name, f.value });
    }
    return std.fmt.comptimePrint("{{\"name\": \"{s}\", \"values\": [{s}]}}", .{ name, values });
}

fn quote(comptime s: []const u8) []const u8 {
    return "\"" ++ s ++ "\"";
}

/// The header's name of a type of abi.zig (String -> PantoString) or of root.zig's handles
/// (PantoAgent); a compile error for any other, so a new kind of type gets a name here first.
fn cName(comptime T: type) []const u8 {
    for (@typeInfo(abi).@"struct".decls) |d| {
        const value = @field(abi, d.name);
        if (@TypeOf(value) == type and value == T) return "Panto" ++ d.name;
    }
    for (@typeInfo(exports).@"struct".decls) |d| {
        const value = @field(exports, d.name);
        if (@TypeOf(value) == type and value == T and std.mem.startsWith(u8, d.name, "Panto")) return d.name;
    }
    @compileError("abi_dump: no C name for " ++ @typeName(T));
}

fn pointerTo(comptime c: []const u8) []const u8 {
    return if (std.mem.endsWith(u8, c, "*")) c ++ "*" else c ++ " *";
}

/// The C spelling of a type of the ABI.
fn cType(comptime T: type) []const u8 {
    if (T == void or T == anyopaque) return "void";
    if (T == c_int) return "int";
    if (T == usize) return "size_t";
    if (T == f64) return "double";
    if (T == c_char) return "char";
    return switch (@typeInfo(T)) {
        .int => |i| std.fmt.comptimePrint("{s}int{d}_t", .{ if (i.signedness == .unsigned) "u" else "", i.bits }),
        .optional => |o| cType(o.child),
        .pointer => |p| if (p.child == u8)
            (if (p.is_const) "const " else "") ++ (if (p.sentinel_ptr != null) "char *" else "uint8_t *")
        else
            (if (p.is_const) "const " else "") ++ pointerTo(cType(p.child)),
        .@"enum" => |e| cType(e.tag_type),
        else => cName(T),
    };
}
