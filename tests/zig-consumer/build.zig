//! A project that uses libpanto as a Zig dependency: `zig build run` streams one turn.
const std = @import("std");

pub fn build(b: *std.Build) void {
    const target = b.standardTargetOptions(.{});
    const optimize = b.standardOptimizeOption(.{});
    const panto = b.dependency("panto", .{ .target = target, .optimize = optimize });
    const exe = b.addExecutable(.{
        .name = "first_turn",
        .root_module = b.createModule(.{
            .root_source_file = b.path("src/main.zig"),
            .target = target,
            .optimize = optimize,
            .imports = &.{.{ .name = "panto", .module = panto.module("panto") }},
        }),
    });
    b.installArtifact(exe);
    const run = b.addRunArtifact(exe);
    if (b.args) |args| run.addArgs(args);
    b.step("run", "Stream one turn").dependOn(&run.step);
}
