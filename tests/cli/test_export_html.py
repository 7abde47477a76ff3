"""`/export FILE.html` (tmux): the conversation as one self-contained HTML file, its texts
escaped (a <script> in a message is shown, never run)."""
from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from conftest import text_reply, tool_reply
from test_interactive import pane  # noqa: F401  (the fixture)


class Tags(HTMLParser):
    """The start tags of a document, and whether any loads something from elsewhere."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.external = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.external |= any(k in ("src", "href") for k, _ in attrs)


def test_export_html_escapes_markup_and_is_self_contained(emulator, pane, workdir: Path):
    (workdir / "page.txt").write_text("<b>bold</b> & co\n")
    emulator({"responses": [tool_reply("read", {"path": "page.txt"}), text_reply("It holds <b>bold</b>.")]})
    p = pane()
    p.type("What is <script>alert(1)</script> in page.txt?")
    p.wait_for("It holds <b>bold</b>.")
    mark = p.mark()
    p.type("/export talk.html")
    p.wait_for("wrote talk.html (4 messages)", after=mark)
    html = (workdir / "talk.html").read_text()
    assert html.startswith("<!DOCTYPE html>")
    assert "What is &lt;script&gt;alert(1)&lt;/script&gt; in page.txt?" in html
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; co" in html and "It holds &lt;b&gt;bold&lt;/b&gt;." in html
    tags = Tags()
    tags.feed(html)
    # Only the document's own tags: no script, nothing from the messages, nothing loaded.
    assert "script" not in tags.tags and "b" in tags.tags  # <b>Tool call</b> is the export's
    assert tags.tags.count("b") == 2 and not tags.external, tags.tags
    assert "<style>" in html and "<section class=\"user\">" in html
