"""Hand-written transcripts for the grader tests: the mini pack, its scenarios, assistant turns and calls."""

from __future__ import annotations

import json
from pathlib import Path

from bench_tui.graders.pack import load_pack

PACK = load_pack(str(Path(__file__).parent / "unit" / "data" / "grader_mini_pack.yaml"))


def sc(sid: str):
    return PACK.scenario(sid)


def call(name: str, args, index: int = 0, cid: str | None = None) -> dict:
    raw = args if isinstance(args, str) else json.dumps(args)
    return {
        "id": cid or f"c{index}",
        "type": "function",
        "function": {"name": name, "arguments": raw},
        "index": index,
    }


def a(content: str = "", tool_calls=None, **meta) -> dict:
    m = {
        "role": "assistant",
        "content": content,
        "finish_reason": "tool_calls" if tool_calls else "stop",
        **meta,
    }
    if tool_calls:
        m["tool_calls"] = tool_calls
    return m


def weather_transcript(first: dict, answer: str = "It is 18 °C and sunny in Paris.") -> list[dict]:
    return [
        {"role": "user", "content": "What's the weather in Paris right now?"},
        first,
        {"role": "tool", "tool_call_id": "c0", "name": "get_weather", "content": '{"temp_c": 18}'},
        a(answer),
    ]
