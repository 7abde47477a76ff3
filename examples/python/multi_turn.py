"""A conversation from Python: two turns on one agent; the second one sees the first (the
agent keeps the conversation and sends it whole). See examples/README.md."""
import os
import sys

import panto


def main() -> int:
    only_openai = "OPENAI_API_KEY" in os.environ and "ANTHROPIC_API_KEY" not in os.environ
    provider = os.environ.get("PANTO_PROVIDER") or ("openai" if only_openai else "anthropic")
    model = os.environ.get("PANTO_MODEL") or ("gpt-4o-mini" if provider == "openai" else "claude-sonnet-4-5")
    with panto.Agent(provider=provider, model=model, base_url=os.environ.get("PANTO_BASE_URL"),
                     api_key=os.environ.get("PANTO_API_KEY"), max_tokens=300,
                     system="Answer in one short sentence.") as agent:
        try:
            for number, prompt in enumerate(["Hi, my name is Ada.", "What is my name?"], start=1):
                print(f"[python] turn {number}: ", end="", flush=True)
                for text in agent.run(prompt).text():
                    print(text, end="", flush=True)
        except panto.Error as err:
            print(f"\nturn failed ({err.code}): {err.message}", file=sys.stderr)
            return 1
        roles = [message["role"] for message in agent.conversation]
        print(f"[python] conversation: {len(roles)} messages ({', '.join(roles)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
