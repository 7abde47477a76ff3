"""One streamed turn from Python: print the text as it arrives. See examples/README.md."""
import os
import sys

import panto


def main() -> int:
    only_openai = "OPENAI_API_KEY" in os.environ and "ANTHROPIC_API_KEY" not in os.environ
    provider = os.environ.get("PANTO_PROVIDER") or ("openai" if only_openai else "anthropic")
    model = os.environ.get("PANTO_MODEL") or ("gpt-4o-mini" if provider == "openai" else "claude-sonnet-4-5")
    agent = panto.Agent(
        provider=provider,
        model=model,
        base_url=os.environ.get("PANTO_BASE_URL"),
        api_key=os.environ.get("PANTO_API_KEY"),
        max_tokens=300,
    )
    with agent, agent.run("Say hello from Python in one sentence.") as stream:
        print("[python] ", end="", flush=True)
        try:
            for event in stream:
                if isinstance(event, panto.ContentDelta) and event.block_kind == "text":
                    print(event.text, end="", flush=True)
                elif isinstance(event, panto.MessageComplete):
                    print(f"    ({event.stop_reason}, {event.usage.output_tokens} tokens out)")
        except panto.Error as err:
            print(f"\nturn failed ({err.code}, HTTP {err.http_status}): {err.message}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
