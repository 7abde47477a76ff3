"""Canceling a turn from Python: a threading.Timer calls stream.cancel() from another thread
shortly after the first text arrives; the partial answer stays in the conversation, marked
aborted, and the next turn works. See examples/README.md."""
import os
import sys
import threading

import panto


def main() -> int:
    only_openai = "OPENAI_API_KEY" in os.environ and "ANTHROPIC_API_KEY" not in os.environ
    provider = os.environ.get("PANTO_PROVIDER") or ("openai" if only_openai else "anthropic")
    model = os.environ.get("PANTO_MODEL") or ("gpt-4o-mini" if provider == "openai" else "claude-sonnet-4-5")
    with panto.Agent(provider=provider, model=model, base_url=os.environ.get("PANTO_BASE_URL"),
                     api_key=os.environ.get("PANTO_API_KEY"), max_tokens=300) as agent:
        stream = agent.run("Tell me a very long story.")
        timer = None
        print("[python] partial: ", end="", flush=True)
        try:
            for event in stream:
                if isinstance(event, panto.ContentDelta) and event.block_kind == "text":
                    print(event.text, end="", flush=True)
                    if timer is None:  # cancel from another thread, 100 ms after the first text
                        timer = threading.Timer(0.1, stream.cancel)
                        timer.start()
            print("\n[python] the turn was not canceled", file=sys.stderr)
            return 1
        except panto.CanceledError as err:
            print(f"\n[python] error: {err.code} ({err.message})")
        finally:
            if timer is not None:
                timer.cancel()
            stream.close()

        last = agent.conversation[-1]
        assert last["role"] == "assistant"  # the canceled turn's partial answer
        kept = "".join(block["text"] for block in last["content"] if block["type"] == "text")
        print(f'[python] kept: {last["stop_reason"]} "{kept}"')

        print("[python] second turn: ", end="", flush=True)
        try:
            for text in agent.run("Then tell me the short version.").text():
                print(text, end="", flush=True)
        except panto.Error as err:
            print(f"\nturn failed ({err.code}): {err.message}", file=sys.stderr)
            return 1
        print(f"[python] conversation: {len(agent.conversation)} messages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
