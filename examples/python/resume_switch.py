"""A session resumed in a later run and continued with another provider.

    python examples/python/resume_switch.py [SESSIONS_DIR]

The first run of the program talks to Anthropic in a new session; the conversation is written
to `SESSIONS_DIR/trip.jsonl` as it goes (a crash loses at most the message being streamed).
The second part opens the same session as a later process would, switches to OpenAI and goes
on: the new provider's address and key come from its own variables (OPENAI_BASE_URL,
OPENAI_API_KEY) unless they were given, and the earlier turns are translated for it (thinking
goes back only to the model that wrote it). See examples/README.md for the environment
variables it reads: PANTO_BASE_URL and PANTO_API_KEY, when set, serve both providers."""
import os
import sys
import tempfile
from typing import Any, Dict

import panto

ACCESS: Dict[str, Any] = {"base_url": os.environ.get("PANTO_BASE_URL"),
                          "api_key": os.environ.get("PANTO_API_KEY"), "max_tokens": 512}


def ask(session: panto.Session, text: str) -> None:
    print(f"[python] {session.settings['provider']}: ", end="", flush=True)
    try:
        for piece in session.run(text).text():
            print(piece, end="", flush=True)
    except panto.Error:
        session.rollback_turn()  # the session file stays a valid history
        raise
    print()


def main(folder: str) -> int:
    try:
        with panto.Session("trip", dir=folder, mode="create", provider="anthropic",
                           model=os.environ.get("PANTO_MODEL") or "claude-sonnet-4-5", **ACCESS) as session:
            ask(session, "I am planning a trip to Lisbon in May. Remember that.")

        # Later, maybe in another process: resume the session and switch provider.
        with panto.Session.resume("trip", dir=folder, provider="anthropic",
                                  model="claude-sonnet-4-5", **ACCESS) as session:
            print(f"[python] resumed {session.id} with {session.message_count} messages")
            session.set_config(provider="openai", model="gpt-4o-mini")
            ask(session, "Where am I going, and when?")
            providers = [m.get("provider") for m in session.conversation if m["role"] == "assistant"]
            print(f"[python] answers by: {', '.join(str(p) for p in providers)}")
    except panto.Error as err:
        print(f"\n[python] error: {err.code}: {err.message}", file=sys.stderr)
        return 1
    for summary in panto.Session.list(folder):
        print(f"[python] {summary.id}: {summary.message_count} messages, first: {summary.first_user_text!r}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1:
        sys.exit(main(sys.argv[1]))
    with tempfile.TemporaryDirectory(prefix="panto-sessions-") as scratch:
        sys.exit(main(scratch))
