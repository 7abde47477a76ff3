"""Fixtures the `panto` command's tests share: the binary, a clean home, the emulator.

Every test runs the real binary (zig-out/bin/panto, built by `zig build`; `make test-cli`
builds it first) with an environment of its own: HOME and the XDG folders in a temp dir (no
user config, history or sessions leak in or out), the caller's provider keys and base URLs
removed, then fake keys set and both providers' base URLs pointed at the test's emulator
(ANTHROPIC_BASE_URL / OPENAI_BASE_URL, which the core honours). A test that needs no key
pops it from `cli_env`.

    def test_x(emulator, run_panto):
        emu = emulator({"responses": [text_reply("Hello")]})
        r = run_panto("-p", "Hi")
        assert r.returncode == 0 and r.stdout == "Hello\\n"
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from panto.emulator import Emulator

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "zig-out" / "bin" / "panto"

# A guard against a hung binary, never an assertion about speed.
RUN_TIMEOUT = 60

# The keys a fake provider accepts (the emulator checks only that one is sent).
ANTHROPIC_KEY = "sk-ant-emulator"
OPENAI_KEY = "sk-emulator"

# Variables of the caller that would change what the command does.
_SCRUB_PREFIXES = ("ANTHROPIC_", "OPENAI_", "PANTO_", "XDG_")


def text_reply(text: str, **message: Any) -> dict[str, Any]:
    """A scenario response: an assistant message of one text block."""
    return {"message": {"content": [{"type": "text", "text": text}], **message}}


def tool_reply(name: str, input: dict[str, Any], id: str = "toolu_1",
               text: str | None = None) -> dict[str, Any]:
    """A scenario response: (an optional text, then) one tool_use block."""
    blocks: list[dict[str, Any]] = [] if text is None else [{"type": "text", "text": text}]
    blocks.append({"type": "tool_use", "id": id, "name": name, "input": input})
    return {"message": {"content": blocks}}


def error_reply(type_: str, message: str, **extra: Any) -> dict[str, Any]:
    """A scenario response: the provider's error body (status by type, or `status=`)."""
    return {"error": {"type": type_, "message": message}, **extra}


@pytest.fixture(scope="session")
def panto_bin() -> Path:
    """zig-out/bin/panto; the tests fail (not skip) when it was not built."""
    if not BIN.is_file():
        pytest.fail(f"{BIN} is missing: run `zig build` (make test-cli builds it)", pytrace=False)
    return BIN


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A temp HOME with empty XDG folders (config, state, data, cache) and a project folder
    `home/project` (the command's working directory: AGENTS.md lookup stops at HOME)."""
    h = tmp_path / "home"
    for sub in (".config", ".local/state", ".local/share", ".cache", "project"):
        (h / sub).mkdir(parents=True)
    return h


@pytest.fixture
def workdir(home: Path) -> Path:
    """The working directory the command runs in."""
    return home / "project"


@pytest.fixture
def config_dir(home: Path) -> Path:
    """~/.config/panto (created): config.json and extensions/ go here."""
    d = home / ".config" / "panto"
    d.mkdir(exist_ok=True)
    return d


@pytest.fixture
def write_config(config_dir: Path) -> Callable[[dict[str, Any]], Path]:
    """write_config({...}) writes ~/.config/panto/config.json."""
    def write(settings: dict[str, Any]) -> Path:
        p = config_dir / "config.json"
        p.write_text(json.dumps(settings))
        return p
    return write


@pytest.fixture
def cli_env(home: Path) -> dict[str, str]:
    """The command's environment (a dict the test may change before running)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_SCRUB_PREFIXES)}
    env.update({
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "LANG": "C.UTF-8",
        "TERM": "xterm-256color",
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        "OPENAI_API_KEY": OPENAI_KEY,
    })
    return env


@pytest.fixture
def emulator(cli_env: dict[str, str]) -> Iterator[Callable[..., Emulator]]:
    """emulator(scenario) starts a provider emulator and points `cli_env` at it (both
    providers' base URLs); it stops when the test ends. Call it again for a second one."""
    started: list[Emulator] = []

    def start(scenario: Any = None, **kw: Any) -> Emulator:
        emu = Emulator(scenario=scenario, **kw)
        started.append(emu)
        cli_env["ANTHROPIC_BASE_URL"] = emu.url
        cli_env["OPENAI_BASE_URL"] = emu.url
        return emu

    yield start
    for emu in started:
        emu.close()


@pytest.fixture
def run_panto(panto_bin: Path, cli_env: dict[str, str],
              workdir: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """run_panto(*args, input=None, cwd=workdir) runs the command to its end, text mode, and
    returns the CompletedProcess (stdout, stderr, returncode). stdin is the given input, or
    empty (not a tty either way)."""
    def run(*args: str, input: str | None = None, cwd: Path | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(panto_bin), *args], input=input if input is not None else "",
                              capture_output=True, text=True, cwd=cwd or workdir,
                              env=env or cli_env, timeout=RUN_TIMEOUT)
    return run


@pytest.fixture(scope="session")
def debug_build(panto_bin: Path) -> bool:
    """Whether zig-out's panto is a Debug build (`--version` says "(Debug)"): only then does
    its allocator report leaks on stderr at exit ("... leaked: ..."), so only then can a test
    that looks for that report fail on a leak. A ReleaseSafe build (`make test-cli`'s default)
    frees through libc and reports nothing."""
    out = subprocess.run([str(panto_bin), "--version"], capture_output=True, text=True,
                         timeout=RUN_TIMEOUT, check=True).stdout
    return out.rstrip().endswith("(Debug)")


def assert_no_leak(stderr: str) -> None:
    """No leak report of Zig's DebugAllocator in a Debug build's stderr."""
    assert " leaked: " not in stderr, stderr[-3000:]


@pytest.fixture
def start_panto(panto_bin: Path, cli_env: dict[str, str],
                workdir: Path) -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    """start_panto(*args) starts the command (binary pipes: stdin, stdout, stderr; or the
    given stdin) for a test that talks to it while it runs (signals); killed at the end if
    still running."""
    procs: list[subprocess.Popen[bytes]] = []

    def start(*args: str, cwd: Path | None = None, stdin: Any = subprocess.PIPE) -> subprocess.Popen[bytes]:
        p = subprocess.Popen([str(panto_bin), *args], stdin=stdin,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             cwd=cwd or workdir, env=cli_env)
        procs.append(p)
        return p

    yield start
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait()
