"""A FastAPI endpoint that streams an agent's answer to the browser as Server-Sent Events.

    pip install fastapi uvicorn
    python examples/python/fastapi_sse.py [--port 8000]
    curl -N -X POST localhost:8000/chat -H 'content-type: application/json' \\
         -d '{"message": "Hello"}'

Each request gets its own agent (an agent holds one conversation; keep one per user session,
e.g. a `panto.Session` by id, to carry the conversation across requests). `async for` pulls
events without blocking the event loop; when the client goes away, Starlette cancels the
generator and `async with` closes the stream, which cancels the provider request. See
examples/README.md for the environment variables it reads."""
import argparse
import json
import os
from typing import AsyncIterator, Dict, Optional

import uvicorn
from fastapi import FastAPI
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

import panto

only_openai = "OPENAI_API_KEY" in os.environ and "ANTHROPIC_API_KEY" not in os.environ
PROVIDER = os.environ.get("PANTO_PROVIDER") or ("openai" if only_openai else "anthropic")
MODEL = os.environ.get("PANTO_MODEL") or ("gpt-4o-mini" if PROVIDER == "openai" else "claude-sonnet-4-5")

app = FastAPI(title="panto SSE example")


class ChatRequest(BaseModel):
    message: str = Field(min_length=1)
    system: Optional[str] = None


def sse(event: str, data: Dict[str, object]) -> str:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n"


async def answer(request: ChatRequest) -> AsyncIterator[str]:
    with panto.Agent(provider=PROVIDER, model=MODEL, base_url=os.environ.get("PANTO_BASE_URL"),
                     api_key=os.environ.get("PANTO_API_KEY"), max_tokens=1024,
                     system=request.system) as agent:
        try:
            async with agent.run(request.message) as stream:
                async for event in stream:
                    if isinstance(event, panto.ContentDelta) and event.block_kind == "text":
                        yield sse("text", {"text": event.text})
                    elif isinstance(event, panto.MessageComplete):
                        yield sse("done", {"stop_reason": event.stop_reason,
                                           "output_tokens": event.usage.output_tokens})
        except panto.Error as err:
            # The status line is already sent: the error goes to the client as an event.
            yield sse("error", {"code": err.code, "message": err.message})


@app.post("/chat")
async def chat(request: ChatRequest) -> StreamingResponse:
    return StreamingResponse(answer(request), media_type="text/event-stream",
                             headers={"cache-control": "no-cache"})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
