//! Builds every part of panto:
//!   zig build          -> zig-out/lib/libpanto.so, libpanto.a, lua/panto.so, include/panto.h,
//!                         bin/panto (the terminal agent)
//!   zig build test     -> the Zig unit tests, the C-ABI layout check and the fuzz inputs' replay
//!   zig build fuzz     -> zig-out/fuzz/libpanto_fuzz.a (libpanto/fuzz/README.md)
//!   zig build go-lib   -> libpanto-go/lib/<goos>_<goarch>/{libpanto.a,panto.h} (the Go module's)
//!   zig build lua      -> zig-out/lib/lua/panto.so alone (the rockspec's build)
const std = @import("std");
const builtin = @import("builtin");

const required_zig = "0.16.0";

/// The one version of panto (scripts/version.py bumps it everywhere): build.zig.zon's.
const version_string = @import("build.zig.zon").version;
const version = std.SemanticVersion.parse(version_string) catch @compileError("build.zig.zon: bad version");

comptime {
    // The build pins one Zig version: the std APIs we use change between releases.
    if (!std.mem.eql(u8, builtin.zig_version_string, required_zig)) {
        @compileError("panto needs Zig " ++ required_zig ++ " exactly, but this is Zig " ++
            builtin.zig_version_string ++ ". Run `make` (it installs ziglang==" ++ required_zig ++
            " into .venv) or use `.venv/bin/python -m ziglang build`.");
    }
}

pub fn build(b: *std.Build) void {
    const target = b.standardTargetOptions(.{});
    // ReleaseSafe unless -Doptimize (or --release) says otherwise: `zig build install` is how
    // users get the libraries, and a Debug libpanto is three times the size and slower.
    const optimize: std.builtin.OptimizeMode = b.option(std.builtin.OptimizeMode, "optimize", "Prioritize performance, safety, or binary size (default ReleaseSafe)") orelse switch (b.release_mode) {
        .off, .any, .safe => .ReleaseSafe,
        .fast => .ReleaseFast,
        .small => .ReleaseSmall,
    };
    const lua_include = b.option([]const u8, "lua-include", "Folder holding lua.h (default /usr/include/lua5.4)") orelse "/usr/include/lua5.4";
    const with_lua = b.option(bool, "lua", "Build the Lua module (needs lua.h; default true)") orelse true;
    const strip = b.option(bool, "strip", "Leave debug info out of the libraries") orelse null;

    // The core runtime, usable from other Zig projects as the module "panto".
    const core = b.addModule("panto", .{
        .root_source_file = b.path("libpanto/src/panto.zig"),
        .target = target,
        .optimize = optimize,
        .strip = strip,
        .link_libc = true, // getenv, and the host programs' allocator
    });
    addMediaCodecs(b, core);

    // The C ABI on top of the core (include/panto.h).
    const c_api = b.createModule(.{
        .root_source_file = b.path("libpanto-c/src/root.zig"),
        .target = target,
        .optimize = optimize,
        .strip = strip,
        .link_libc = true,
        .imports = &.{.{ .name = "panto", .module = core }},
    });
    c_api.addIncludePath(b.path("include"));

    const shared = b.addLibrary(.{ .name = "panto", .root_module = c_api, .linkage = .dynamic, .version = version });
    exportOnlyPanto(b, shared);
    b.installArtifact(shared);
    // `zig build shared`: libpanto.so alone, what the Python wheel carries (bindings-py/setup.py):
    // half the compiling of `install`, which builds libpanto.a too.
    b.step("shared", "Install zig-out/lib/libpanto.so alone (the Python wheel's)").dependOn(&b.addInstallArtifact(shared, .{}).step);
    const static = b.addLibrary(.{ .name = "panto", .root_module = c_api, .linkage = .static });
    static.bundle_compiler_rt = true;
    // A plain `cc prog.c libpanto.a` must link in every mode: Debug compiles the C shims with
    // UBSan checks, whose runtime goes inside; and Zig's own backend (Debug) writes an object
    // without a .note.GNU-stack section, which makes the linker give the program an
    // executable stack, so LLVM compiles the library's Zig code in every mode.
    static.bundle_ubsan_rt = true;
    static.use_llvm = true;
    installWithCodecs(b, static);
    b.installFile("include/panto.h", "include/panto.h");
    addGoLib(b, static);

    // pkg-config, so C programs build with `cc $(pkg-config --cflags --libs panto)`, or
    // `cc -static $(pkg-config --static --cflags --libs panto)`. No rpath in Libs, as no
    // library's .pc has one: a system prefix needs none, and for another one the program's
    // author chooses (docs/c.md: -Wl,-rpath,$(pkg-config --variable=libdir panto)).
    // Libs.private: what libpanto.a needs beside itself (the codecs are inside it).
    const pc = b.addWriteFiles().add("panto.pc", b.fmt(
        \\prefix={s}
        \\libdir=${{prefix}}/lib
        \\includedir=${{prefix}}/include
        \\
        \\Name: panto
        \\Description: LLM-agent runtime with a pull-shaped streaming C API
        \\Version: {s}
        \\Libs: -L${{libdir}} -lpanto
        \\Libs.private: -lm -lpthread
        \\Cflags: -I${{includedir}}
        \\
    , .{ b.install_prefix, version_string }));
    b.getInstallStep().dependOn(&b.addInstallFileWithDir(pc, .lib, "pkgconfig/panto.pc").step);

    // The panto command's unit tests (with Lua: run by `zig build test`).
    var cli_tests: ?*std.Build.Step.Compile = null;
    if (with_lua) {
        // The Lua 5.4 module: a C module written in Zig. It does not link Lua: the interpreter
        // that loads it provides the lua_* symbols. It calls panto through include/panto.h (the
        // header's externs bind to the exports of panto_c, compiled into the module) and exports
        // only luaopen_panto, so it cannot clash with a libpanto.so in the same process.
        const lua_c = b.addTranslateC(.{ .root_source_file = b.path("libpanto-lua/src/c.h"), .target = target, .optimize = optimize });
        lua_c.addSystemIncludePath(.{ .cwd_relative = lua_include });
        lua_c.addIncludePath(b.path("include"));
        const lua_c_mod = lua_c.createModule();
        const lua_mod = b.createModule(.{
            .root_source_file = b.path("libpanto-lua/src/panto_lua.zig"),
            .target = target,
            .optimize = optimize,
            .link_libc = true,
            .imports = &.{
                .{ .name = "panto_c", .module = c_api },
                .{ .name = "c", .module = lua_c_mod },
            },
        });
        const lua_lib = b.addLibrary(.{ .name = "panto_lua", .root_module = lua_mod, .linkage = .dynamic });
        lua_lib.linker_allow_shlib_undefined = true;
        lua_lib.setVersionScript(b.path("libpanto-lua/src/panto.map"));
        // Zig's own linker (Debug builds) ignores version scripts: link with LLD in every mode.
        lua_lib.use_llvm = true;
        lua_lib.use_lld = true;
        const install_lua = b.addInstallFileWithDir(lua_lib.getEmittedBin(), .{ .custom = "lib/lua" }, "panto.so");
        b.getInstallStep().dependOn(&install_lua.step);
        b.step("lua", "Install lib/lua/panto.so alone (the rockspec's build)").dependOn(&install_lua.step);

        // The `panto` command (panto-cli/): a terminal agent on the core's Zig API, with Lua 5.4
        // linked statically for its extensions, whose require('panto') is the module above
        // (compiled in, with panto.ext added by the command's preload loader).
        const cli = b.addExecutable(.{ .name = "panto", .root_module = b.createModule(.{
            .root_source_file = b.path("panto-cli/src/main.zig"),
            .target = target,
            .optimize = optimize,
            .strip = strip,
            .link_libc = true,
            .imports = &.{
                .{ .name = "panto", .module = core },
                .{ .name = "panto_lua", .module = lua_mod },
                .{ .name = "c", .module = lua_c_mod },
            },
        }) });
        const lua_static = b.option([]const u8, "lua-static", "The static Lua 5.4 library the panto command links (default Debian's liblua5.4.a)") orelse
            b.fmt("/usr/lib/{s}-linux-gnu/liblua5.4.a", .{@tagName(target.result.cpu.arch)});
        cli.root_module.addObjectFile(.{ .cwd_relative = lua_static });
        cli.root_module.linkSystemLibrary("m", .{});
        b.installArtifact(cli);
        cli_tests = b.addTest(.{ .root_module = cli.root_module });
    }

    // `zig build hotpath`: the per-event work without the network, for profiling.
    const hotpath = b.addExecutable(.{ .name = "hotpath", .root_module = b.createModule(.{
        .root_source_file = b.path("libpanto/src/hotpath_bench.zig"),
        .target = target,
        .optimize = optimize,
        .link_libc = true,
    }) });
    b.step("hotpath", "Build zig-out/bin/hotpath (SSE parsing and decoding of a body file, timed)").dependOn(&b.addInstallArtifact(hotpath, .{}).step);

    // `zig build media-fit`: the media pipeline alone on one file, for bench/images.py.
    const media_module = b.createModule(.{ .root_source_file = b.path("libpanto/src/media.zig"), .target = target, .optimize = optimize, .link_libc = true });
    addMediaCodecs(b, media_module);
    const media_fit = b.addExecutable(.{ .name = "media_fit", .root_module = b.createModule(.{
        .root_source_file = b.path("bench/clients/media_fit.zig"),
        .target = target,
        .optimize = optimize,
        .link_libc = true,
        .imports = &.{.{ .name = "media", .module = media_module }},
    }) });
    b.step("media-fit", "Build zig-out/bin/media_fit (media.fit on one file, timed; make bench)").dependOn(&b.addInstallArtifact(media_fit, .{}).step);

    // `zig build session-bench`: writing, loading and appending to sessions, for bench/sessions.py.
    const session_bench = b.addExecutable(.{ .name = "session_bench", .root_module = b.createModule(.{
        .root_source_file = b.path("bench/clients/session_bench.zig"),
        .target = target,
        .optimize = optimize,
        .link_libc = true,
        .imports = &.{.{ .name = "panto", .module = core }},
    }) });
    b.step("session-bench", "Build zig-out/bin/session_bench (a session written, loaded, appended to, timed; make bench)").dependOn(&b.addInstallArtifact(session_bench, .{}).step);

    // `zig build abi-dump`: the C ABI as JSON, reflected from libpanto-c's Zig definitions, on
    // stdout; scripts/gen_abi.py makes the bindings' mirrors from it.
    const abi_dump = b.addExecutable(.{ .name = "abi_dump", .root_module = b.createModule(.{
        .root_source_file = b.path("libpanto-c/src/abi_dump.zig"),
        .target = target,
        .optimize = .Debug, // only its comptime part matters: compiles fastest
        .link_libc = true,
        .imports = &.{.{ .name = "panto", .module = core }},
    }) });
    abi_dump.root_module.addIncludePath(b.path("include")); // as the C ABI module's: it imports root.zig
    b.step("abi-dump", "Print the C ABI (structs, enums, functions) as JSON, for scripts/gen_abi.py").dependOn(&b.addRunArtifact(abi_dump).step);

    // Tests.
    const test_step = b.step("test", "Run the Zig unit tests and the C-ABI layout check");
    // -Dtest-filter=NAME: only the core's tests whose names hold NAME (one file's, while working on it).
    const test_filters = b.option([]const []const u8, "test-filter", "Run only the core tests whose names hold this") orelse &.{};
    const core_tests = b.addTest(.{ .root_module = core, .filters = test_filters });
    const run_core_tests = b.addRunArtifact(core_tests);
    // The MCP client's tests spawn this stdio server (libpanto/src/mcp/client_test.zig).
    run_core_tests.setEnvironmentVariable("PANTO_MCP_TEST_SERVER", b.pathFromRoot("tests/mcp/server.py"));
    run_core_tests.setEnvironmentVariable("PANTO_MCP_SDK_SERVER", b.pathFromRoot("tests/mcp/sdk_server.py"));
    run_core_tests.setEnvironmentVariable("PANTO_MCP_HTTP_SERVER", b.pathFromRoot("tests/mcp/http_server.py"));
    // The reference server from npm (scripts/setup.sh installs it), over stdio and over HTTP.
    run_core_tests.setEnvironmentVariable("PANTO_MCP_EVERYTHING", b.pathFromRoot("tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js"));
    run_core_tests.setEnvironmentVariable("PANTO_MCP_EVERYTHING_HTTP", b.pathFromRoot("tests/mcp/everything_http.mjs"));
    // The venv's python has the official SDK (PyPI `mcp`, requirements-dev.txt), so the SDK
    // server's test runs in every `zig build test` and never skips.
    run_core_tests.setEnvironmentVariable("PANTO_MCP_PYTHON", b.pathFromRoot(".venv/bin/python"));
    test_step.dependOn(&run_core_tests.step);
    b.step("test-core", "Run the core's unit tests alone (-Dtest-filter=NAME: some of them)").dependOn(&run_core_tests.step);
    const c_tests = b.addTest(.{ .root_module = c_api });
    test_step.dependOn(&b.addRunArtifact(c_tests).step);
    if (cli_tests) |t| {
        const run_cli_tests = b.addRunArtifact(t);
        test_step.dependOn(&run_cli_tests.step);
        b.step("test-cli-unit", "Run the panto command's unit tests alone").dependOn(&run_cli_tests.step);
    }

    // Fuzzing (libpanto/fuzz/README.md): `zig build fuzz` builds the fuzz targets instrumented
    // for libFuzzer (`make fuzz` links and runs them); `zig build test` replays their kept inputs.
    const fuzz_lib = b.addLibrary(.{ .name = "panto_fuzz", .linkage = .static, .root_module = b.createModule(.{
        .root_source_file = b.path("libpanto/fuzz.zig"),
        .target = target,
        .optimize = optimize,
        .link_libc = true,
        .fuzz = true,
    }) });
    addMediaCodecs(b, fuzz_lib.root_module);
    fuzz_lib.bundle_compiler_rt = true;
    const install_fuzz = b.addInstallFileWithDir(withCodecs(b, fuzz_lib), .{ .custom = "fuzz" }, "libpanto_fuzz.a");
    b.step("fuzz", "Build zig-out/fuzz/libpanto_fuzz.a, the fuzz targets for libFuzzer (make fuzz runs them)").dependOn(&install_fuzz.step);
    const fuzz_paths = b.addOptions();
    fuzz_paths.addOption([]const u8, "repo", b.pathFromRoot("."));
    // Debug: it compiles in seconds (the core's unit tests run in ReleaseSafe already), and
    // checks as much. The filter keeps the tests of libpanto/fuzz/ (named "fuzz.FILE.test...")
    // and leaves out the core's, which the targets import.
    const fuzz_replay = b.addTest(.{ .name = "fuzz_replay", .filters = &.{"fuzz."}, .root_module = b.createModule(.{
        .root_source_file = b.path("libpanto/fuzz.zig"),
        .target = target,
        .optimize = .Debug,
        .link_libc = true,
        .imports = &.{.{ .name = "fuzz_paths", .module = fuzz_paths.createModule() }},
    }) });
    addMediaCodecs(b, fuzz_replay.root_module);
    test_step.dependOn(&b.addRunArtifact(fuzz_replay).step);
}

/// The media pipeline's codecs (libpanto/src/media/): its C shims, and Debian's static
/// libpng, libjpeg-turbo, libwebp, giflib, stb and zlib (scripts/setup.sh installs them), so
/// that nothing built from libpanto needs them at run time. Users before what they use.
const codec_archives = [_][]const u8{ "png16", "jpeg", "webpdemux", "webp", "gif", "stb", "z" };

fn codecArchive(b: *std.Build, module: *std.Build.Module, name: []const u8) []const u8 {
    const arch = @tagName(module.resolved_target.?.result.cpu.arch);
    return b.fmt("/usr/lib/{s}-linux-gnu/lib{s}.a", .{ arch, name });
}

/// The codecs' headers, searched after the C library's: a cross build (`-Dtarget=
/// x86_64-linux-gnu.2.17`, `aarch64-linux-gnu.2.17`) gets no system include path from Zig, and
/// its libc headers (Zig's, of the glibc targeted) must win over /usr/include's.
fn addCodecHeaders(module: *std.Build.Module) void {
    const arch = @tagName(module.resolved_target.?.result.cpu.arch);
    module.addAfterIncludePath(.{ .cwd_relative = module.owner.fmt("/usr/include/{s}-linux-gnu", .{arch}) });
    module.addAfterIncludePath(.{ .cwd_relative = "/usr/include" });
}

fn addMediaCodecs(b: *std.Build, module: *std.Build.Module) void {
    module.addCSourceFiles(.{
        .root = b.path("libpanto/src/media"),
        .files = &.{ "png_codec.c", "jpeg_codec.c", "webp_codec.c", "gif_codec.c", "resize.c", "codec_stderr.c" },
        .flags = &.{ "-std=c99", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror" },
    });
    for (codec_archives) |name| module.addObjectFile(.{ .cwd_relative = codecArchive(b, module, name) });
    addCodecHeaders(module);
    module.linkSystemLibrary("m", .{});
}

/// Installs libpanto.a with the codecs' objects in it, so that `cc prog.c libpanto.a` links.
fn installWithCodecs(b: *std.Build, static: *std.Build.Step.Compile) void {
    b.getInstallStep().dependOn(&b.addInstallLibFile(withCodecs(b, static), "libpanto.a").step);
}

/// A static library with the codec archives' objects in it. (Zig puts the codec archives
/// into a static library whole, as members, which linkers do not read: `zig ar` replaces them
/// by their objects.)
fn withCodecs(b: *std.Build, static: *std.Build.Step.Compile) std.Build.LazyPath {
    var script: std.ArrayList(u8) = .empty;
    script.appendSlice(b.allocator, "{ echo \"CREATE $3\"; echo \"ADDLIB $2\";") catch @panic("OOM");
    for (codec_archives) |name| script.appendSlice(b.allocator, b.fmt(" echo \"DELETE lib{s}.a\";", .{name})) catch @panic("OOM");
    for (codec_archives) |name| script.appendSlice(b.allocator, b.fmt(" echo \"ADDLIB {s}\";", .{codecArchive(b, static.root_module, name)})) catch @panic("OOM");
    script.appendSlice(b.allocator, " echo SAVE; echo END; } | \"$1\" ar -M") catch @panic("OOM");
    const bundle = b.addSystemCommand(&.{ "sh", "-c", script.items, "sh", b.graph.zig_exe });
    bundle.addFileArg(static.getEmittedBin());
    return bundle.addOutputFileArg(static.out_lib_filename);
}

/// `zig build go-lib`: libpanto.a and panto.h copied into the Go module, in
/// libpanto-go/lib/<goos>_<goarch>/ (a build output, gitignored), which its cgo lines link: a
/// Go program then needs neither this checkout nor libpanto.so. -Dtarget picks the platform.
fn addGoLib(b: *std.Build, static: *std.Build.Step.Compile) void {
    const step = b.step("go-lib", "Copy libpanto.a and panto.h into libpanto-go/lib/<goos>_<goarch>/ (the Go module's library)");
    const target = static.root_module.resolved_target.?.result;
    const goarch: ?[]const u8 = switch (target.cpu.arch) {
        .x86_64 => "amd64",
        .aarch64 => "arm64",
        else => null,
    };
    if (target.os.tag != .linux or goarch == null) {
        step.dependOn(&b.addFail(b.fmt("go-lib: the Go module links Linux x86_64 and aarch64 libraries only, not {s}-{s}", .{ @tagName(target.cpu.arch), @tagName(target.os.tag) })).step);
        return;
    }
    const dir = b.fmt("libpanto-go/lib/linux_{s}", .{goarch.?});
    const update = b.addUpdateSourceFiles();
    update.addCopyFileToSource(withCodecs(b, static), b.fmt("{s}/libpanto.a", .{dir}));
    update.addCopyFileToSource(b.path("include/panto.h"), b.fmt("{s}/panto.h", .{dir}));
    step.dependOn(&update.step);
}

/// libpanto.so exports the C ABI and nothing else: the codecs linked into it stay private (a
/// host's own libpng cannot bind to them, nor they to it), and Debian's static codec archives,
/// built as PIE code, may be linked into a shared library only when their symbols cannot be
/// preempted. Zig's own linker (Debug builds) ignores version scripts: LLD in every mode.
fn exportOnlyPanto(b: *std.Build, lib: *std.Build.Step.Compile) void {
    lib.setVersionScript(b.addWriteFiles().add("libpanto.map", "{ global: panto_*; local: *; };\n"));
    lib.use_llvm = true;
    lib.use_lld = true;
}
