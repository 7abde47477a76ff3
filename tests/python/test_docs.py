"""The samples of examples/ and the runnable snippets of docs/*.md, run against the emulator.

Samples: first_turn, tool_use, cancel and multi_turn in C, Python, Go and Lua, each against
examples/<name>-scenario.json (first_turn: demo-scenario.json), with assertions on what they
print. C and Go ones are built into build/examples as scripts/demo.sh does. C alone:
epoll_streams (many turns on one epoll loop, issue 28); Lua alone: many_streams (the same
with stream:step() and LuaSocket's select).

Snippets: a fenced block in docs/*.md runs when the line right before its fence is

    <!-- run scenario=NAME [expect="TEXT"] ... -->

NAME picks examples/NAME-scenario.json; every `expect` must appear in the snippet's stdout, and
it must exit 0. The snippet reads PANTO_BASE_URL and PANTO_API_KEY. Languages: python, lua, c (compiled with the strict flags of the Makefile), go
(a temporary module whose go.mod points panto.dev/panto at libpanto-go) and zig (a temporary
project that depends on the repository, like tests/zig-consumer). Fences without the comment
are fragments and are not run. Each language page must have a runnable snippet in each of its
sections "First turn", "Tools", "Errors", "Cancellation" and "Multi-turn conversation".
"""
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from panto.emulator import Emulator

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
DOCS = ROOT / "docs"
LIB = ROOT / "zig-out" / "lib"
BUILD = ROOT / "build" / "examples"
CSTRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-pthread"]
GO = shutil.which("go") or "/usr/local/go/bin/go"
LANGS = ("c", "python", "go", "lua")
SAMPLES = ("first_turn", "tool_use", "cancel", "multi_turn", "image")
PAGES = ("c", "python", "go", "lua", "zig")
SECTIONS = ("First turn", "Tools", "Errors", "Cancellation", "Multi-turn conversation")


def _env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "PANTO_BASE_URL", "PANTO_PROVIDER", "PANTO_MODEL")}
    env.setdefault("PANTO_LIBRARY", str(LIB / "libpanto.so"))
    env.setdefault("LD_LIBRARY_PATH", str(LIB))
    env.setdefault("LUA_CPATH", f"{LIB}/lua/?.so;;")
    env["PYTHONPATH"] = str(ROOT / "bindings-py")
    env["PATH"] = env.get("PATH", "") + ":/usr/local/go/bin"
    env.update(extra)
    return env


def _scenario(name):
    return json.loads((EXAMPLES / f"{name}-scenario.json").read_text())


def _run(argv, scenario, *, cwd=ROOT, timeout=60):
    """Runs argv with a fresh emulator playing examples/<scenario>-scenario.json."""
    with Emulator(scenario=_scenario(scenario), base_dir=EXAMPLES) as emu:
        result = subprocess.run(argv, cwd=cwd, env=_env(PANTO_BASE_URL=emu.url, PANTO_API_KEY="demo-key"),
                                capture_output=True, text=True, timeout=timeout)
        result.requests = emu.requests()
    return result


def _check(cmd, **kw):
    result = subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=600, **kw)
    assert result.returncode == 0, f"{' '.join(map(str, cmd))}\n{result.stdout}{result.stderr}"


# ---- samples -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def built_samples():
    BUILD.mkdir(parents=True, exist_ok=True)
    for name in SAMPLES:
        _check(["cc", *CSTRICT, "-Iinclude", f"examples/c/{name}.c", "-Lzig-out/lib", "-lpanto",
                f"-Wl,-rpath,{LIB}", "-o", str(BUILD / f"{name}_c")], cwd=ROOT)
        _check([GO, "build", "-o", str(BUILD / f"{name}_go"), f"./{name}"], cwd=EXAMPLES / "go")


def _sample_argv(lang, name):
    return {
        "c": [str(BUILD / f"{name}_c")],
        "python": [sys.executable, str(EXAMPLES / "python" / f"{name}.py")],
        "go": [str(BUILD / f"{name}_go")],
        "lua": ["lua5.4", str(EXAMPLES / "lua" / f"{name}.lua")],
    }[lang]


def _text(response):
    return "".join(b["text"] for b in response["message"]["content"] if b["type"] == "text")


def test_c_epoll_streams():
    """examples/c/epoll_streams.c: 50 turns at once on one thread's epoll loop, each answer
    300 ms away (examples/epoll_streams-scenario.json)."""
    BUILD.mkdir(parents=True, exist_ok=True)
    exe = BUILD / "epoll_streams_c"
    _check(["cc", *CSTRICT, "-Iinclude", "examples/c/epoll_streams.c", "-Lzig-out/lib", "-lpanto",
            f"-Wl,-rpath,{LIB}", "-o", str(exe)], cwd=ROOT)
    result = _run([str(exe), "50"], "epoll_streams")
    assert result.returncode == 0, result.stdout + result.stderr
    text = _text(_scenario("epoll_streams")["responses"][0])
    assert f"[c] 50/50 turns done on one thread, {50 * len(text.encode())} bytes of text\n" in result.stdout, result.stdout
    assert len(result.requests) == 50


def test_lua_many_streams():
    """examples/lua/many_streams.lua: 20 turns at once on one Lua thread, stepped and waited
    for with LuaSocket's select (examples/epoll_streams-scenario.json)."""
    if subprocess.run(["lua5.4", "-e", "require('socket')"], capture_output=True).returncode != 0:
        pytest.skip("LuaSocket (Debian lua-socket) is not installed")
    result = _run(["lua5.4", str(EXAMPLES / "lua" / "many_streams.lua"), "20"], "epoll_streams")
    assert result.returncode == 0, result.stdout + result.stderr
    text = _text(_scenario("epoll_streams")["responses"][0])
    assert f"[lua] 20/20 turns done on one thread, {20 * len(text.encode())} bytes of text\n" in result.stdout, result.stdout
    assert len(result.requests) == 20


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", SAMPLES)
def test_sample(built_samples, lang, name):
    scenario = "demo" if name == "first_turn" else name
    result = _run(_sample_argv(lang, name), scenario)
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    responses = _scenario(scenario)["responses"]
    if name == "first_turn":
        assert f"[{lang}] {_text(responses[0])}    (end_turn, 17 tokens out)\n" in out, out
    elif name == "tool_use":
        assert '  -> get_weather({"city":"Paris"})\n  <- Sunny, 21 degrees in Paris\n' in out, out
        assert _text(responses[1]) in out, out
    elif name == "cancel":
        story, short = _text(responses[0]), _text(responses[1])
        partial = re.search(rf"^\[{lang}\] partial: (.*)$", out, re.M)
        kept = re.search(rf'^\[{lang}\] kept: aborted "(.*)"$', out, re.M)
        assert partial and kept, out
        # What was printed before the cancel is what the conversation kept: a strict prefix.
        assert kept.group(1) == partial.group(1), out
        assert kept.group(1) and story.startswith(kept.group(1)) and kept.group(1) != story, out
        assert f"[{lang}] error: canceled (the turn was canceled" in out, out
        assert f"[{lang}] second turn: {short}" in out, out
        assert f"[{lang}] conversation: 4 messages\n" in out, out
        # The second request carried the aborted partial answer.
        messages = result.requests[-1]["body"]["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant", "user"], messages
    elif name == "image":
        # The emulator's answers list what arrived: the drawn picture as a PNG, then the screenshot.
        assert f"[{lang}] Received 1 attachment: image/png " in out, out
        assert "  -> screenshot({})\n  <- The screen right now:\n  <- image image/png, 32x32, " in out, out
        assert "Received 1 attachment: image/png 32x32. Both arrived; thank you." in out, out
        first = result.requests[0]["body"]["messages"][0]["content"]
        assert [b["type"] for b in first] == ["text", "image"], first
    else:
        first, second = _text(responses[0]), _text(responses[1])
        assert f"[{lang}] turn 1: {first}[{lang}] turn 2: {second}" in out, out
        assert f"[{lang}] conversation: 4 messages (user, assistant, user, assistant)\n" in out, out
        messages = result.requests[-1]["body"]["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant", "user"], messages


# ---- snippets of docs/*.md -----------------------------------------------------------------

MARK = re.compile(r"^<!--\s*run\b(.*?)-->\s*\n```(\w+)[^\n]*\n(.*?)^```\s*$", re.M | re.S)


class Snippet:
    def __init__(self, page, line, lang, code, attrs):
        self.page, self.line, self.lang, self.code = page, line, lang, code
        self.scenario = attrs.get("scenario", "demo")
        self.expect = attrs.get("expect", [])

    @property
    def id(self):
        return f"{self.page.name}:{self.line}"


def parse_snippets(path):
    text = path.read_text()
    found = []
    for m in MARK.finditer(text):
        attrs = {"expect": []}
        for word in shlex.split(m.group(1)):
            key, _, value = word.partition("=")
            if key == "expect":
                attrs["expect"].append(value)
            else:
                attrs[key] = value
        line = text.count("\n", 0, m.start()) + 2  # the fence's line
        found.append(Snippet(path, line, m.group(2), m.group(3), attrs))
    return found


SNIPPETS = [s for page in sorted(DOCS.glob("*.md")) for s in parse_snippets(page)]


def _go_module(folder):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "go.mod").write_text(
        "module snippet\n\ngo 1.24\n\nrequire panto.dev/panto v0.0.0\n\n"
        f"replace panto.dev/panto => {ROOT / 'libpanto-go'}\n")


def run_snippet(snippet, tmp_path, zig_exe=None):
    """Builds (when needed) and runs one snippet; returns the CompletedProcess."""
    if snippet.lang == "python":
        path = tmp_path / "snippet.py"
        path.write_text(snippet.code)
        argv = [sys.executable, str(path)]
    elif snippet.lang == "lua":
        path = tmp_path / "snippet.lua"
        path.write_text(snippet.code)
        argv = ["lua5.4", str(path)]
    elif snippet.lang == "c":
        path = tmp_path / "snippet.c"
        path.write_text(snippet.code)
        exe = tmp_path / "snippet"
        build = subprocess.run(["cc", *CSTRICT, f"-I{ROOT / 'include'}", str(path), f"-L{LIB}", "-lpanto",
                                f"-Wl,-rpath,{LIB}", "-o", str(exe)], capture_output=True, text=True, env=_env())
        if build.returncode != 0:
            return build
        argv = [str(exe)]
    elif snippet.lang == "go":
        _go_module(tmp_path)
        (tmp_path / "main.go").write_text(snippet.code)
        exe = tmp_path / "snippet"
        build = subprocess.run([GO, "build", "-o", str(exe), "."], cwd=tmp_path, capture_output=True, text=True,
                               env=_env(), timeout=600)
        if build.returncode != 0:
            return build
        argv = [str(exe)]
    elif snippet.lang == "zig":
        argv = [str(zig_exe)]
    else:
        raise AssertionError(f"{snippet.id}: no runner for {snippet.lang} snippets")
    return _run(argv, snippet.scenario, cwd=tmp_path)


def _assert_ran(snippet, result):
    report = f"{snippet.id} ({snippet.lang}, scenario {snippet.scenario})\n{result.stdout}{result.stderr}"
    assert result.returncode == 0, report
    for want in snippet.expect:
        assert want in result.stdout, f"expected {want!r} in the output of {report}"


@pytest.fixture(scope="module")
def zig_snippets():
    """Builds every Zig snippet at once: one project under build/, one executable each."""
    snippets = [s for s in SNIPPETS if s.lang == "zig"]
    if not snippets:
        return {}
    project = ROOT / "build" / "docs-zig"  # inside the repository: the dependency path is relative
    shutil.rmtree(project / "src", ignore_errors=True)
    (project / "src").mkdir(parents=True)
    exes = []
    for i, s in enumerate(snippets):
        (project / "src" / f"snippet{i}.zig").write_text(s.code)
        exes.append(f'    add(b, panto, target, optimize, "snippet{i}");')
    (project / "build.zig").write_text(
        'const std = @import("std");\n\n'
        "pub fn build(b: *std.Build) void {\n"
        "    const target = b.standardTargetOptions(.{});\n"
        "    const optimize = b.standardOptimizeOption(.{});\n"
        '    const panto = b.dependency("panto", .{ .target = target, .optimize = optimize });\n'
        + "\n".join(exes) + "\n}\n\n"
        "fn add(b: *std.Build, panto: *std.Build.Dependency, target: std.Build.ResolvedTarget, "
        "optimize: std.builtin.OptimizeMode, name: []const u8) void {\n"
        "    b.installArtifact(b.addExecutable(.{ .name = name, .root_module = b.createModule(.{\n"
        '        .root_source_file = b.path(b.fmt("src/{s}.zig", .{name})),\n'
        "        .target = target,\n        .optimize = optimize,\n"
        '        .imports = &.{.{ .name = "panto", .module = panto.module("panto") }},\n'
        "    }) }));\n}\n")
    zon = (ROOT / "tests" / "zig-consumer" / "build.zig.zon").read_text()
    (project / "build.zig.zon").write_text(zon)
    build = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-m", "ziglang", "build"], cwd=project,
                           capture_output=True, text=True, timeout=900)
    if build.returncode != 0:
        # Name the snippet the compiler complains about.
        raise AssertionError(f"the Zig snippets do not build ({', '.join(s.id for s in snippets)}):\n"
                             + build.stderr)
    return {s.id: project / "zig-out" / "bin" / f"snippet{i}" for i, s in enumerate(snippets)}


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[s.id for s in SNIPPETS])
def test_snippet(snippet, tmp_path, request):
    zig_exe = request.getfixturevalue("zig_snippets")[snippet.id] if snippet.lang == "zig" else None
    _assert_ran(snippet, run_snippet(snippet, tmp_path, zig_exe))


@pytest.mark.parametrize("page", PAGES)
def test_page_sections_have_runnable_snippets(page):
    path = DOCS / f"{page}.md"
    text = path.read_text()
    assert re.search(r"^## Install", text, re.M), f"{path}: no Install section"
    runnable = {s.line for s in parse_snippets(path)}
    headings = [(m.group(1).strip(), text.count("\n", 0, m.start()) + 1) for m in re.finditer(r"^## (.+)$", text, re.M)]
    for title in SECTIONS:
        starts = [line for name, line in headings if name == title]
        assert starts, f"{path}: no section '## {title}'"
        end = min([line for _, line in headings if line > starts[0]], default=10**9)
        assert any(starts[0] < line < end for line in runnable), f"{path}: '## {title}' has no runnable snippet"


@pytest.mark.parametrize("page", ["README.md", "docs/python.md", "bindings-py/README.md"])
def test_install_steps_install_only_wheels_they_built(page):
    """panto has no wheel on an index: a `pip install X.whl` must install what an earlier
    `pip wheel ... -w DIR` of the same page built into DIR (issue 34: the docs installed a
    wheel file that nobody served)."""
    built_into = set()
    for line in (ROOT / page).read_text().splitlines():
        words = shlex.split(line.split("#", 1)[0], posix=True) if "pip " in line else []
        if "wheel" in words and "-w" in words:
            built_into.add(words[words.index("-w") + 1])
        for word in words:
            if "install" in words and word.endswith(".whl"):
                folder = os.path.dirname(word)
                assert folder in built_into, f"{page}: `{line.strip()}` installs a wheel no step built"


def test_docs_index_links_every_page():
    index = (DOCS / "README.md").read_text()
    for page in PAGES:
        assert f"({page}.md)" in index, page


def test_every_marked_fence_is_found():
    """A `<!-- run -->` comment whose fence the parser missed would silently skip a snippet."""
    for page in DOCS.glob("*.md"):
        marks = len(re.findall(r"^<!--\s*run\b", page.read_text(), re.M))
        assert marks == len(parse_snippets(page)), page


BROKEN = {
    "python": "raise SystemExit('broken')\n",
    "lua": "error('broken')\n",
    "c": "int main(void) { return undeclared; }\n",
    "go": "package main\n\nfunc main() { undefined() }\n",
}


@pytest.mark.parametrize("lang", sorted(BROKEN))
def test_a_broken_snippet_fails(lang, tmp_path):
    snippet = Snippet(pathlib.Path("broken.md"), 1, lang, BROKEN[lang], {"expect": []})
    with pytest.raises(AssertionError):
        _assert_ran(snippet, run_snippet(snippet, tmp_path))
    working = Snippet(pathlib.Path("ok.md"), 1, lang, {
        "python": "print('[python] hello')\n",
        "lua": "print('[lua] hello')\n",
        "c": "#include <stdio.h>\nint main(void) { puts(\"[c] hello\"); return 0; }\n",
        "go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"[go] hello\") }\n",
    }[lang], {"expect": ["nothing like this"]})
    with pytest.raises(AssertionError):  # runs, but its output lacks the expected text
        _assert_ran(working, run_snippet(working, tmp_path))
