"""NO_COLOR and the theme (issue 35): the screen's colors, in a tmux pane (test_interactive.py's
Pane) whose capture keeps the SGR sequences, and print mode's notes on a terminal's stderr."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import text_reply, tool_reply
from test_interactive import Pane

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

SGR = re.compile(r"\x1b\[[0-9;]*m")
THINKING = {"type": "thinking", "thinking": "Let me weigh this.", "signature": "sig"}


def thinking_reply(text: str) -> dict:
    return {"message": {"content": [THINKING, {"type": "text", "text": text}]}}


def run_in_pane(panto_bin: Path, env: dict[str, str], workdir: Path, tmp_path: Path, *args: str) -> Pane:
    p = Pane([str(panto_bin), *args], env, workdir, tmp_path)
    p.wait_for("/help for commands")
    return p


def test_no_color_writes_no_sgr_sequence_on_the_screen(emulator, panto_bin, cli_env, workdir, tmp_path):
    emulator({"responses": [thinking_reply("Done."), thinking_reply("Done again.")]})
    for no_color, answer in (("", "Done."), ("1", "Done again.")):
        env = {**cli_env, "NO_COLOR": no_color}
        p = run_in_pane(panto_bin, env, workdir, tmp_path)
        try:
            p.type("Think")
            p.wait_for(answer)
            p.command("/thinking nope", "/thinking:")  # an error line (red)
            screen = p.screen(escapes=True)
            assert "▸ thinking: Let me weigh this." in screen
            if no_color:
                assert SGR.findall(screen) == [], screen
            else:  # (an empty NO_COLOR is no NO_COLOR: the colors are there)
                assert "\x1b[2m▸ thinking" in screen and "\x1b[31m" in screen
        finally:
            p.close()


def test_no_color_in_print_mode_notes_on_a_terminal(emulator, panto_bin, cli_env, workdir, tmp_path):
    emulator({"responses": [tool_reply("bash", {"command": "echo hi"}), text_reply("Not run."),
                            tool_reply("bash", {"command": "echo hi"}), text_reply("Not run.")]})
    for no_color in ("", "1"):
        env = {**cli_env, "NO_COLOR": no_color}
        p = Pane([str(panto_bin), "--allow", "exec", "-p", "go"], env, workdir, tmp_path)
        try:
            assert p.exit_status() == 0
            screen = p.screen(escapes=True)
            assert "a bash call was denied" in screen
            assert (SGR.search(screen) is None) == bool(no_color), screen
        finally:
            p.close()


def test_a_theme_gives_the_roles_its_colors(emulator, panto_bin, cli_env, workdir, tmp_path, home):
    emulator({"responses": [thinking_reply("Done.")]})
    (home / ".config" / "panto").mkdir(parents=True, exist_ok=True)
    (home / ".config" / "panto" / "config.json").write_text(json.dumps({"theme": {"muted": "magenta", "error": "bright-yellow"}}))
    p = run_in_pane(panto_bin, cli_env, workdir, tmp_path)
    try:
        p.type("Think")
        p.wait_for("Done.")
        p.command("/thinking nope", "/thinking:")
        screen = p.screen(escapes=True)
        assert "\x1b[35m▸ thinking" in screen and "\x1b[2m▸ thinking" not in screen
        assert "\x1b[93m/thinking:" in screen
    finally:
        p.close()


def test_a_theme_with_an_unknown_role_or_color_is_refused(emulator, run_panto, home):
    emulator({"responses": []})
    config = home / ".config" / "panto" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"theme": {"muted": "mauve"}}))
    r = run_panto("-p", "x")
    assert r.returncode == 2 and 'theme: muted: "mauve" is not a color' in r.stderr
    config.write_text(json.dumps({"theme": {"warning": "red"}}))
    r = run_panto("-p", "x")
    assert r.returncode == 2 and 'theme: no role "warning"' in r.stderr
