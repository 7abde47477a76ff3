"""`--resume` (a picker of this folder's sessions) and `/name` (issue 35): the picker runs in a
tmux pane (test_interactive.py's Pane), the sessions made beforehand in print mode."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import text_reply
from test_interactive import Pane, last_user_text, pane  # noqa: F401  (the fixture)

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def make_session(run_panto, prompt: str) -> str:
    r = run_panto("--json", "-p", prompt)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.splitlines()[0])["id"]


def picker(panto_bin: Path, cli_env, workdir: Path, tmp_path: Path, *args: str) -> Pane:
    """`panto --resume` in a pane, not waiting for the prompt (the picker comes first)."""
    return Pane([str(panto_bin), "--resume", *args], cli_env, workdir, tmp_path)


def test_resume_picks_a_session_newest_first_and_resumes_it(emulator, run_panto, panto_bin, cli_env, workdir, tmp_path):
    emu = emulator({"responses": [text_reply("About apples."), text_reply("About pears."), text_reply("More apples.")]})
    first = make_session(run_panto, "first topic: apples")
    make_session(run_panto, "second topic: pears")
    p = picker(panto_bin, cli_env, workdir, tmp_path)
    try:
        screen = p.wait_for("Resume a session")
        # Newest first, the first prompt and the message count shown.
        assert screen.index("second topic: pears") < screen.index("first topic: apples")
        assert "     2  first topic: apples" in screen
        p.keys("Down", "Enter")
        screen = p.wait_for(f"resumed session {first} (2 messages)")
        assert "Resume a session" not in screen  # the list was taken off
        assert "> first topic: apples" in screen and "About apples." in screen
        p.type("go on")
        p.wait_for("More apples.")
        body = emu.requests()[2]["body"]
        assert "first topic: apples" in json.dumps(body["messages"][0])
        assert last_user_text(emu.requests()[2]) == "go on"
        p.type("/quit")
        assert p.exit_status() == 0
    finally:
        p.close()


def test_esc_leaves_the_picker_and_panto(emulator, run_panto, panto_bin, cli_env, workdir, tmp_path):
    emulator({"responses": [text_reply("ok")]})
    make_session(run_panto, "only one")
    p = picker(panto_bin, cli_env, workdir, tmp_path)
    try:
        p.wait_for("only one")
        p.keys("Escape")
        assert p.exit_status() == 0
        assert "/help for commands" not in p.screen()
    finally:
        p.close()


def test_resume_with_no_session_here_or_no_terminal_is_a_usage_error(emulator, run_panto, panto_bin, cli_env, workdir, tmp_path):
    emulator({"responses": []})
    r = run_panto("--resume")
    assert r.returncode == 2 and "--resume picks a session on a terminal" in r.stderr
    assert run_panto("--resume", "-p", "x").returncode == 2
    p = picker(panto_bin, cli_env, workdir, tmp_path)
    try:
        assert p.exit_status() == 2
        assert "no session to resume in" in p.screen()
    finally:
        p.close()


def test_name_names_the_session_and_the_lists_show_it(emulator, run_panto, pane, panto_bin, cli_env, workdir, tmp_path):
    emulator({"responses": [text_reply("Hello.")]})
    p = pane()
    p.type("/name")
    p.wait_for("has no name (/name TEXT names it)")
    p.type("hi there")
    p.wait_for("Hello.")
    p.type("/name build fix")
    p.wait_for("named: build fix")
    p.type("/quit")
    assert p.exit_status() == 0
    listed = run_panto("sessions")
    assert "[build fix] hi there" in listed.stdout
    [entry] = json.loads(run_panto("sessions", "--json").stdout)
    assert entry["name"] == "build fix"
    q = picker(panto_bin, cli_env, workdir, tmp_path)
    try:
        q.wait_for("[build fix] hi there")
        q.keys("Enter")
        q.wait_for("resumed session")
        q.type("/name")
        q.wait_for(": build fix")
    finally:
        q.close()


def test_name_without_a_session_says_so(emulator, pane):
    emulator({"responses": []})
    p = pane("--no-session")
    p.type("/name x")
    p.wait_for("/name: no session (--no-session): nothing to name")
