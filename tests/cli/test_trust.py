"""Trust: a project folder's own extensions (.panto/extensions/) and AGENTS.md files load only
once the user has trusted the folder (--trust, or "y" to the interactive question), remembered
by real path in $XDG_STATE_HOME/panto/trusted. Print mode goes on without them, saying why on
stderr; the user's own extensions and -e files always load. (The interactive question is
driven through tmux in test_interactive.py.)"""
from __future__ import annotations

import stat
from pathlib import Path

from conftest import text_reply
from test_print import system_text as system_of

WRITER = 'local f = io.open({path!r}, "a"); f:write("ran\\n"); f:close()\n'


def project_extension(workdir: Path, marker: Path) -> Path:
    d = workdir / ".panto" / "extensions"
    d.mkdir(parents=True, exist_ok=True)
    f = d / "writer.lua"
    f.write_text(WRITER.format(path=str(marker)))
    return f


def trusted_list(home: Path) -> Path:
    return home / ".local" / "state" / "panto" / "trusted"


def system_text(emu) -> str:
    """The system prompt of the emulator's last request."""
    return system_of(emu.requests()[-1]["body"])


def test_print_mode_leaves_an_untrusted_folders_extension_out_and_says_why(emulator, run_panto, home, workdir, tmp_path):
    marker = tmp_path / "ran.txt"
    ext = project_extension(workdir, marker)
    emulator({"responses": [text_reply("ok")]})
    r = run_panto("-p", "go")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "ok\n"
    assert not marker.exists()
    assert f"panto: {workdir} is not trusted" in r.stderr
    assert str(ext) in r.stderr and "--trust" in r.stderr
    assert not trusted_list(home).exists()


def test_extensions_off_in_the_config_are_not_named_as_left_out(emulator, run_panto, workdir, tmp_path, write_config):
    # With "extensions": false the project's extensions would not load even if trusted, so the
    # note names only what trust would bring (here nothing: no note at all).
    marker = tmp_path / "ran.txt"
    ext = project_extension(workdir, marker)
    write_config({"extensions": False})
    emulator({"responses": [text_reply("ok"), text_reply("ok")]})
    r = run_panto("-p", "go")
    assert r.returncode == 0, r.stderr
    assert str(ext) not in r.stderr and "not trusted" not in r.stderr
    assert not marker.exists()
    # The same with an AGENTS.md: the note names it and not the extension.
    (workdir / "AGENTS.md").write_text("be brief")
    (workdir / ".git").mkdir()
    r = run_panto("-p", "go")
    assert r.returncode == 0, r.stderr
    assert "AGENTS.md" in r.stderr and str(ext) not in r.stderr


def test_trust_flag_loads_it_and_is_remembered(emulator, run_panto, home, workdir, tmp_path):
    marker = tmp_path / "ran.txt"
    project_extension(workdir, marker)
    emulator({"responses": [text_reply("ok"), text_reply("again")]})
    r = run_panto("--trust", "-p", "go")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    assert marker.read_text() == "ran\n"
    listed = trusted_list(home)
    assert listed.read_text() == f"{workdir.resolve()}\n"
    assert stat.S_IMODE(listed.stat().st_mode) == 0o600
    # A later run, without the flag: the folder is trusted.
    r = run_panto("-p", "go")
    assert r.returncode == 0, r.stderr
    assert r.stderr == "" and r.stdout == "again\n"
    assert marker.read_text() == "ran\nran\n"


def test_trust_is_per_folder(emulator, run_panto, home, workdir, tmp_path):
    marker = tmp_path / "ran.txt"
    other = home / "other"
    other.mkdir()
    project_extension(other, marker)
    project_extension(workdir, marker)
    emulator({"responses": [text_reply("ok"), text_reply("ok")]})
    assert run_panto("--trust", "-p", "go").returncode == 0
    r = run_panto("-p", "go", cwd=other)
    assert r.returncode == 0
    assert marker.read_text() == "ran\n"
    assert f"panto: {other} is not trusted" in r.stderr


def test_a_repositorys_agents_md_waits_for_trust_and_the_users_own_does_not(emulator, run_panto, home, workdir):
    emu = emulator({"responses": [text_reply("ok")] * 3})
    (workdir / ".git").mkdir()
    (home / "AGENTS.md").write_text("Home rules.\n")
    (workdir / "AGENTS.md").write_text("Repository rules.\n")
    sub = workdir / "sub"
    sub.mkdir()
    # In a folder of the repository: the repository (its .git) is the project.
    r = run_panto("-p", "x", cwd=sub)
    assert r.returncode == 0
    assert "Home rules." in system_text(emu) and "Repository rules." not in system_text(emu)
    assert f"panto: {workdir} is not trusted" in r.stderr and str(workdir / "AGENTS.md") in r.stderr
    assert run_panto("--trust", "-p", "x").returncode == 0
    assert "Repository rules." in system_text(emu)
    r = run_panto("-p", "x", cwd=sub)
    assert r.stderr == ""
    assert "Repository rules." in system_text(emu)


def test_the_users_extensions_and_e_files_load_in_an_untrusted_folder(emulator, run_panto, home, workdir, tmp_path):
    marker = tmp_path / "ran.txt"
    user = home / ".config" / "panto" / "extensions"
    user.mkdir(parents=True)
    (user / "mine.lua").write_text(WRITER.format(path=str(marker)))
    e = tmp_path / "e.lua"
    e.write_text(WRITER.format(path=str(marker)))
    emulator({"responses": [text_reply("ok")]})
    r = run_panto("-p", "go", "-e", str(e))
    assert r.returncode == 0
    # The folder brings nothing of its own: no note.
    assert r.stderr == ""
    assert marker.read_text() == "ran\nran\n"
    assert not trusted_list(home).exists()
