"""A streaming chat REPL: one agent, a line of input per turn, each answer printed as it
arrives. Ctrl-C during an answer cancels it (the part already shown stays in the
conversation); Ctrl-D or an empty line ends. `/undo` takes the last turn back out.

    python examples/python/repl.py

See examples/README.md for the environment variables it reads."""
import os
import sys

import panto


def main() -> int:
    only_openai = "OPENAI_API_KEY" in os.environ and "ANTHROPIC_API_KEY" not in os.environ
    provider = os.environ.get("PANTO_PROVIDER") or ("openai" if only_openai else "anthropic")
    model = os.environ.get("PANTO_MODEL") or ("gpt-4o-mini" if provider == "openai" else "claude-sonnet-4-5")
    prompt = "> " if sys.stdin.isatty() else ""
    with panto.Agent(provider=provider, model=model, base_url=os.environ.get("PANTO_BASE_URL"),
                     api_key=os.environ.get("PANTO_API_KEY"), max_tokens=1024,
                     system="You are a concise assistant.") as agent:
        while True:
            try:
                line = input(prompt).strip()
            except EOFError:
                break
            if not line:
                break
            if line == "/undo":
                # Drops the last user message and everything answered to it.
                user_turns = [i for i, m in enumerate(agent.conversation) if m["role"] == "user"]
                if user_turns:
                    agent.truncate(user_turns[-1])
                print(f"[python] {agent.message_count} messages left")
                continue
            stream = agent.run(line)
            try:
                for text in stream.text():
                    print(text, end="", flush=True)
                print()
            except KeyboardInterrupt:
                stream.cancel()
                print("\n[python] (canceled)")
            except panto.Error as err:
                # The failed turn kept nothing, or rollback_turn() removes what it kept.
                agent.rollback_turn()
                print(f"\n[python] error: {err.code}: {err.message}", file=sys.stderr)
            finally:
                stream.close()
        print(f"[python] bye after {agent.message_count} messages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
