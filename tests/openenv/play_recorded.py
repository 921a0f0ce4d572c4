"""Plays recorded gymflow episodes on an OpenEnv server with openenv-core's own client, for tests/openenv.test.ts.

Reads a JSON file ``{"url": ..., "episodes": [{"task", "seed", "first", "steps": [{"action", "observation",
"reward", "done"}]}]}`` (what the expert did in-process, recorded by the test), connects one
``GenericEnvClient`` per episode (one WebSocket session each), resets with the episode's task and seed, sends the
recorded actions one by one and compares each answer with the recording. Prints one JSON report on stdout:
``{"schema_tools": [...], "episodes": [{"task", "steps", "mismatches", "done", "success", "state"}]}``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import requests

from openenv.core.generic_client import GenericEnvClient


async def play(url: str, episode: dict[str, Any]) -> dict[str, Any]:
    mismatches: list[str] = []
    async with GenericEnvClient(base_url=url) as env:
        result = await env.reset(seed=episode["seed"], task=episode["task"])
        if result.observation["text"] != episode["first"]:
            mismatches.append(f"reset: observation {result.observation['text']!r} != {episode['first']!r}")
        if result.observation["info"]["task"]["id"] != episode["task"]:
            mismatches.append(f"reset: task {result.observation['info']['task']['id']!r}")
        for i, step in enumerate(episode["steps"]):
            result = await env.step(step["action"])
            got = (result.observation["text"], result.reward, result.done)
            want = (step["observation"], step["reward"], step["done"])
            if got != want:
                mismatches.append(f"step {i}: {got!r} != {want!r}")
        state = await env.state()
    return {
        "task": episode["task"],
        "steps": len(episode["steps"]),
        "mismatches": mismatches,
        "done": result.done,
        "success": result.observation["info"].get("success"),
        "reason": result.observation["info"].get("reason"),
        "state": state,
    }


async def main(path: str) -> None:
    with open(path, encoding="utf-8") as f:
        spec = json.load(f)
    url = spec["url"]
    schema = requests.get(f"{url}/schema", timeout=10).json()
    tools = [branch["properties"]["tool"]["const"] for branch in schema["action"]["oneOf"]]
    episodes = [await play(url, e) for e in spec["episodes"]]
    print(json.dumps({"schema_tools": tools, "episodes": episodes}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
