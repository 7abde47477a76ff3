"""N turns waiting at once on one asyncio loop, by one Python client (bench/waiting.py runs it):

    waiting_py.py CLIENT BASE_URL N       # CLIENT: panto, anthropic (AsyncAnthropic), openai (AsyncOpenAI)

Each turn is what a new user writes: panto's `async for event in agent.run(...)` (an agent a
turn: an agent runs one turn at a time), or the SDK's streaming call iterated with `async
for`; all are started at once with asyncio.gather. Prints one line, as go-panto's `waiting`:

    streams=N wall_s=W cpu_s=C threads_peak=T threads_created=K rss_peak_kb=R

threads_peak samples /proc/self/status every millisecond (a thread of its own) while the
turns run, itself not counted; rss_peak_kb is VmHWM at the end.
"""

from __future__ import annotations

import asyncio
import os
import resource
import sys
import threading
import time
from typing import Any, Awaitable, Callable, List


def status_field(name: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(name + ":"):
                return int(line.split()[1])
    return 0


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def limits(connections: int) -> Any:
    """httpx's connection limits (the SDKs are on httpx, or on its successor httpx2)."""
    try:
        import httpx2 as httpx  # type: ignore[import-not-found]
    except ImportError:
        import httpx  # type: ignore[import-not-found, no-redef]
    return httpx.Limits(max_connections=connections)


def turns_panto(url: str, n: int) -> Callable[[], List[Awaitable[None]]]:
    import panto

    agents = [panto.Agent(provider="anthropic", model="claude-sonnet-4-6", base_url=url, api_key="bench",
                          max_tokens=1024, retry={"max_retries": 0}) for _ in range(n)]

    async def turn(agent: Any) -> None:
        async for _ in agent.run("Hello"):
            pass

    return lambda: [turn(a) for a in agents]


def turns_anthropic(url: str, n: int) -> Callable[[], List[Awaitable[None]]]:
    import anthropic

    # One client for all (as the SDK advises), its pool wide enough for every turn at once (its
    # default holds 1,000 connections).
    client = anthropic.AsyncAnthropic(base_url=url, api_key="bench", max_retries=0, timeout=600,
                                      http_client=anthropic.DefaultAsyncHttpxClient(
                                          limits=limits(n + 10)))

    async def turn() -> None:
        stream = await client.messages.create(model="claude-sonnet-4-6", max_tokens=1024, stream=True,
                                              messages=[{"role": "user", "content": "Hello"}])
        async for _ in stream:
            pass

    return lambda: [turn() for _ in range(n)]


def turns_openai(url: str, n: int) -> Callable[[], List[Awaitable[None]]]:
    import openai

    client = openai.AsyncOpenAI(base_url=url + "/v1", api_key="bench", max_retries=0, timeout=600,
                                http_client=openai.DefaultAsyncHttpxClient(limits=limits(n + 10)))

    async def turn() -> None:
        stream = await client.chat.completions.create(model="gpt-4.1", max_tokens=1024, stream=True,
                                                      messages=[{"role": "user", "content": "Hello"}])
        async for _ in stream:
            pass

    return lambda: [turn() for _ in range(n)]


CLIENTS = {"panto": turns_panto, "anthropic": turns_anthropic, "openai": turns_openai}


def main() -> int:
    client, url, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    make = CLIENTS[client](url, n)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, status_field("Threads") - 1)  # the sampler itself not counted
            time.sleep(0.001)

    threads_before = status_field("Threads")
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    cpu0 = cpu_seconds()
    t0 = time.perf_counter()

    async def run_all() -> None:
        await asyncio.gather(*make())

    asyncio.run(run_all())
    wall = time.perf_counter() - t0
    cpu = cpu_seconds() - cpu0
    done.set()
    sampler.join()
    print(f"streams={n} wall_s={wall:.3f} cpu_s={cpu:.3f} threads_peak={peak} "
          f"threads_created={max(0, peak - (threads_before - 1))} rss_peak_kb={status_field('VmHWM')}")
    os._exit(0)  # (no agent's or client's teardown in the figures)


if __name__ == "__main__":
    sys.exit(main())
