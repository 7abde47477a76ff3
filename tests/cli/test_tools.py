"""The bundled tools `write`, `edit` and `bash` (Lua extensions in the binary), called by the
model through the real binary against the emulator, on the test's own folder. Each test reads
the tool's result from --json (the tool_result event) and checks the files it changed."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import RUN_TIMEOUT, text_reply, tool_reply


def events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def tool_results(stdout: str) -> list[dict[str, Any]]:
    return [e for e in events(stdout) if e["event"] == "tool_result"]


def offered_tools(emu: Any) -> list[str]:
    return [t["name"] for t in emu.requests()[0]["body"].get("tools", [])]


def call(emulator: Any, name: str, input: dict[str, Any]) -> Any:
    return emulator({"responses": [tool_reply(name, input), text_reply("ok")]})


def one_result(emulator: Any, run_panto: Any, name: str, input: dict[str, Any], allow: str) -> dict[str, Any]:
    """The model calls `name` with `input` once; the run (granted `allow`, asking nothing:
    test_approvals.py has the asking) succeeds, and its one tool_result event is returned."""
    call(emulator, name, input)
    r = run_panto("-p", "go", "--json", "--allow", allow, "--yolo")
    assert r.returncode == 0, r.stderr
    [res] = tool_results(r.stdout)
    return res


# ---- write ----

def test_write_creates_the_file_and_its_folders(emulator, run_panto, workdir: Path):
    res = one_result(emulator, run_panto, "write", {"path": "a/b/new.txt", "content": "hello\n"}, allow="fs.write")
    assert res["is_error"] is False
    assert res["content"] == "Wrote 6 bytes to a/b/new.txt"
    assert (workdir / "a" / "b" / "new.txt").read_text() == "hello\n"


def test_write_of_one_byte_says_byte(emulator, run_panto, workdir: Path):
    res = one_result(emulator, run_panto, "write", {"path": "one.txt", "content": "x"}, allow="fs.write")
    assert res["content"] == "Wrote 1 byte to one.txt"


def test_write_replaces_a_file(emulator, run_panto, workdir: Path):
    (workdir / "f.txt").write_text("old content")
    call(emulator, "write", {"path": "f.txt", "content": "new"})
    r = run_panto("-p", "go", "--json", "--allow", "fs.write", "--yolo")
    assert r.returncode == 0, r.stderr
    assert tool_results(r.stdout)[0]["is_error"] is False
    assert (workdir / "f.txt").read_text() == "new"


def test_without_fs_write_the_model_is_not_told_of_write_and_edit(emulator, run_panto, workdir: Path, write_config):
    write_config({"allow": ["fs.read"]})
    emu = call(emulator, "write", {"path": "f.txt", "content": "x"})
    r = run_panto("-p", "go", "--json", "--yolo")
    assert r.returncode == 0, r.stderr
    tools = offered_tools(emu)
    assert "write" not in tools and "edit" not in tools and "bash" not in tools
    [res] = tool_results(r.stdout)
    assert res["is_error"] is True
    assert not (workdir / "f.txt").exists()


# ---- edit ----

def test_edit_replaces_the_one_occurrence(emulator, run_panto, workdir: Path):
    (workdir / "code.py").write_text("a = 1\nb = 2\nc = 3\n")
    res = one_result(emulator, run_panto, "edit", {"path": "code.py", "old": "b = 2", "new": "b = 20"}, allow="fs.write")
    assert res["is_error"] is False
    assert res["content"] == "Edited code.py: replaced 1 occurrence at line 2"
    assert (workdir / "code.py").read_text() == "a = 1\nb = 20\nc = 3\n"


def test_edit_refuses_a_missing_text_and_leaves_the_file(emulator, run_panto, workdir: Path):
    (workdir / "code.py").write_text("a = 1\n")
    res = one_result(emulator, run_panto, "edit", {"path": "code.py", "old": "a = 2", "new": "a = 3"}, allow="fs.write")
    assert res["is_error"] is True
    assert res["content"] == "edit: `old` was not found in code.py (it must match exactly, whitespace included)"
    assert (workdir / "code.py").read_text() == "a = 1\n"


def test_edit_refuses_a_text_that_is_not_unique_naming_the_count(emulator, run_panto, workdir: Path):
    (workdir / "code.py").write_text("x = 0\nx = 0\nx = 0\n")
    res = one_result(emulator, run_panto, "edit", {"path": "code.py", "old": "x = 0", "new": "x = 1"}, allow="fs.write")
    assert res["is_error"] is True
    assert "occurs 3 times in code.py" in res["content"]
    assert (workdir / "code.py").read_text() == "x = 0\nx = 0\nx = 0\n"


def test_edit_of_a_missing_file_is_an_error_result(emulator, run_panto, workdir: Path):
    res = one_result(emulator, run_panto, "edit", {"path": "nope.py", "old": "a", "new": "b"}, allow="fs.write")
    assert res["is_error"] is True and "nope.py" in res["content"]
    assert not (workdir / "nope.py").exists()


# ---- bash ----

def test_bash_gives_stdout_and_stderr(emulator, run_panto, workdir: Path):
    res = one_result(emulator, run_panto, "bash", {"command": "echo out; echo err >&2; pwd"}, allow="exec")
    assert res["is_error"] is False
    assert res["content"] == f"out\nerr\n{workdir}\n"


def test_bash_failure_is_an_error_result_with_the_status(emulator, run_panto):
    res = one_result(emulator, run_panto, "bash", {"command": "echo partial; exit 3"}, allow="exec")
    assert res["is_error"] is True
    assert res["content"] == "partial\n\n[exit status 3]"


CUT_NOTE = re.compile(r"\[output cut: the first (\d+) bytes \((\d+) lines\) of (\d+) are left out; "
                      r"the whole output is in (\S+) \(read parts of it with bash: grep, tail, sed -n\)\]\n")


def test_bash_long_output_keeps_its_end_and_saves_the_whole_to_a_private_file(emulator, run_panto, cli_env, tmp_path: Path):
    # A long build whose error is its last line: the end is what the model gets.
    cli_env["TMPDIR"] = str(tmp_path)
    command = "for i in $(seq 1 5000); do echo \"compiling unit $i\"; done; echo 'error: the build failed at the end' >&2; exit 2"
    whole = "".join(f"compiling unit {i}\n" for i in range(1, 5001)) + "error: the build failed at the end\n"
    res = one_result(emulator, run_panto, "bash", {"command": command}, allow="exec")
    assert res["is_error"] is True
    content = res["content"]
    note = CUT_NOTE.match(content)
    assert note, content[:300]
    cut_bytes, cut_lines, total, path = int(note[1]), int(note[2]), int(note[3]), Path(note[4])
    shown = content[note.end():]
    assert shown.endswith("compiling unit 5000\nerror: the build failed at the end\n\n[exit status 2]")
    assert len(shown) <= 30000 + len("\n[exit status 2]")
    # What is shown starts at a whole line, and the note counts exactly what is not shown.
    assert shown.startswith("compiling unit ")
    assert total == len(whole) and cut_bytes == total - len(shown) + len("\n[exit status 2]")
    assert whole[cut_bytes:] + "\n[exit status 2]" == shown
    assert cut_lines == whole[:cut_bytes].count("\n")
    # The whole output is in a file of the temp folder that only its owner reads.
    assert path.parent == tmp_path
    assert path.read_text() == whole
    assert path.stat().st_mode & 0o777 == 0o600


def test_bash_output_of_one_long_line_keeps_its_end(emulator, run_panto, cli_env, tmp_path: Path):
    cli_env["TMPDIR"] = str(tmp_path)
    res = one_result(emulator, run_panto, "bash", {"command": "head -c 100000 /dev/zero | tr '\\0' a; echo -n END"}, allow="exec")
    assert res["is_error"] is False
    note = CUT_NOTE.match(res["content"])
    assert note and (note[1], note[2], note[3]) == ("70003", "0", "100003"), res["content"][:300]
    assert res["content"][note.end():] == "a" * 29997 + "END"
    assert Path(note[4]).read_text() == "a" * 100000 + "END"


def test_bash_long_output_says_when_the_whole_could_not_be_saved(emulator, run_panto, cli_env, tmp_path: Path):
    cli_env["TMPDIR"] = str(tmp_path / "missing")
    res = one_result(emulator, run_panto, "bash", {"command": "seq 1 20000"}, allow="exec")
    assert res["content"].startswith("[output cut: the first ")
    assert "of 108894 are left out; the whole output could not be saved]\n" in res["content"]
    assert res["content"].endswith("\n19999\n20000\n")


def test_bash_short_output_saves_no_file(emulator, run_panto, cli_env, tmp_path: Path):
    cli_env["TMPDIR"] = str(tmp_path)
    res = one_result(emulator, run_panto, "bash", {"command": "seq 1 3"}, allow="exec")
    assert res["content"] == "1\n2\n3\n"
    assert list(tmp_path.glob("panto-output-*")) == []


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead too (its parent has not reaped it yet).
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


def assert_dies(pid: int) -> None:
    """The process is gone, or goes: SIGKILL is sent before panto goes on, but a process on
    the other core dies when it next runs (the deadline guards against a hang; not a speed test)."""
    deadline = time.monotonic() + RUN_TIMEOUT
    while pid_alive(pid):
        assert time.monotonic() < deadline, f"process {pid} survived the kill"
        time.sleep(0.01)


def test_bash_timeout_kills_the_command_and_what_it_started(emulator, run_panto, workdir: Path):
    res = one_result(emulator, run_panto, "bash", {"command": "sleep 300 & echo $! > bg.pid; echo started; wait", "timeout": 1}, allow="exec")
    assert res["is_error"] is True
    assert res["content"] == "started\n\n[timed out after 1 seconds: the command was killed]"
    assert_dies(int((workdir / "bg.pid").read_text()))


def test_bash_is_canceled_by_sigint_and_its_processes_killed(emulator, start_panto, workdir: Path):
    call(emulator, "bash", {"command": "sleep 300 & echo $! > bg.pid; wait"})
    proc = start_panto("-p", "go", "--allow", "exec", "--yolo", stdin=subprocess.DEVNULL)
    pid_file = workdir / "bg.pid"
    deadline = time.monotonic() + RUN_TIMEOUT
    while not (pid_file.exists() and pid_file.read_text().strip()):
        assert proc.poll() is None, proc.stderr.read().decode()
        assert time.monotonic() < deadline, "the command never started"
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=RUN_TIMEOUT)
    assert proc.returncode == 130, err.decode()
    assert_dies(int(pid_file.read_text()))


def test_bash_calls_of_one_round_run_together(emulator, run_panto, workdir: Path):
    # The first call waits for a file the second makes: were the calls run one after the
    # other, the first would time out.
    emu = emulator({"responses": [
        {"message": {"content": [
            {"type": "tool_use", "id": "toolu_1", "name": "bash",
             "input": {"command": "while [ ! -f flag ]; do sleep 0.01; done; echo saw flag", "timeout": 30}},
            {"type": "tool_use", "id": "toolu_2", "name": "bash", "input": {"command": "touch flag; echo made flag"}},
        ]}},
        text_reply("ok"),
    ]})
    r = run_panto("-p", "go", "--json", "--allow", "exec", "--yolo")
    assert r.returncode == 0, r.stderr
    results = {res["id"]: res for res in tool_results(r.stdout)}
    assert results["toolu_1"]["content"] == "saw flag\n" and results["toolu_1"]["is_error"] is False
    assert results["toolu_2"]["content"] == "made flag\n"
    assert len(emu.requests()) == 2


def test_bash_commands_start_with_no_signal_blocked(emulator, run_panto):
    # Print mode blocks SIGINT in its threads (a watcher takes it); a command must not inherit that.
    res = one_result(emulator, run_panto, "bash", {"command": "grep SigBlk /proc/self/status"}, allow="exec")
    assert res["content"] == "SigBlk:\t0000000000000000\n"


# ---- the path rule of the file tools (read, write, edit) ----
# One rule for all three: a path inside the working directory, relative or absolute, is used
# without asking (read) or asks as every write does; one outside it (absolute, by `..`, or
# through a symlink) asks first (the core's `outside` approval match, test_permissions.py),
# so print mode denies it and nothing is read or written; --yolo lets it run.

FILE_TOOLS = {
    "read": ({}, "fs.read"),
    "write": ({"content": "new"}, "fs.write"),
    "edit": ({"old": "old", "new": "new"}, "fs.write"),
}


def file_tool_call(emulator, run_panto, tool: str, path: str) -> dict[str, Any]:
    extra, allow = FILE_TOOLS[tool]
    return one_result(emulator, run_panto, tool, {"path": path, **extra}, allow=allow)


@pytest.mark.parametrize("tool", FILE_TOOLS)
def test_file_tools_take_an_absolute_path_inside_the_working_directory(tool, emulator, run_panto, workdir: Path):
    (workdir / "sub").mkdir()
    target = workdir / "sub" / "f.txt"
    target.write_text("old")
    res = file_tool_call(emulator, run_panto, tool, str(target))
    assert res["is_error"] is False, res["content"]
    assert target.read_text() == ("old" if tool == "read" else "new")
    if tool == "read":
        assert res["content"] == "old\n"


@pytest.mark.parametrize("tool", FILE_TOOLS)
@pytest.mark.parametrize("how", ["dotdot", "absolute", "symlinked_file", "symlinked_folder"])
def test_file_tools_ask_before_a_path_outside_the_working_directory(tool, how, emulator, run_panto, workdir: Path):
    outside = workdir.parent / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("old")
    (workdir / "link_file").symlink_to(outside / "f.txt")
    (workdir / "link_dir").symlink_to(outside)
    path = {"dotdot": "../outside/f.txt", "absolute": str(outside / "f.txt"),
            "symlinked_file": "link_file", "symlinked_folder": "link_dir/f.txt"}[how]
    extra, _ = FILE_TOOLS[tool]
    call(emulator, tool, {"path": path, **extra})
    # It asks (a read too, which inside asks nothing): print mode denies it.
    r = run_panto("-p", "go", "--json")
    assert r.returncode == 0, r.stderr
    asked = [c for e in map(json.loads, r.stdout.splitlines()) if e["event"] == "approval_request" for c in e["calls"]]
    assert [(c["name"], c["input"]["path"]) for c in asked] == [(tool, path)]
    [res] = tool_results(r.stdout)
    assert res["is_error"] is True and "old" not in res["content"]
    assert f"panto: a {tool} call was denied: it asks for approval" in r.stderr
    assert (outside / "f.txt").read_text() == "old"
    # --yolo: it runs, through the symlink too.
    res = file_tool_call(emulator, run_panto, tool, path)
    assert res["is_error"] is False, res["content"]
    assert (outside / "f.txt").read_text() == ("old" if tool == "read" else "new")


def test_write_outside_the_working_directory_creates_nothing_unasked(emulator, run_panto, workdir: Path):
    (workdir / "up").symlink_to(workdir.parent)
    for path in ["../new.txt", "../made/new.txt", str(workdir.parent / "new.txt"), "up/new.txt", "sub/../../new.txt"]:
        call(emulator, "write", {"path": path, "content": "new"})
        r = run_panto("-p", "go", "--json")
        [res] = tool_results(r.stdout)
        assert res["is_error"] is True and "a write call was denied" in r.stderr, (path, res)
        assert not (workdir.parent / "new.txt").exists() and not (workdir.parent / "made").exists(), path
        assert not (workdir / "sub").exists()
