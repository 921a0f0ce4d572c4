"""Drives `gymflow mcp` over stdio with the official Python MCP client (`mcp` on PyPI), for tests/mcp.test.ts.

    python tests/support/mcp_client.py NODE GYMFLOW_JS ROOT LOGS_DIR

Lists the tools, then calls get_schema, convert_logs (LOGS_DIR -> py-converted.jsonl), score_trajectory (its first
trajectory, domain coding) and a call with a wrong-typed argument, and prints one JSON object with what came back.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def field(obj, snake: str, camel: str):
    """A result field: `mcp` 2.x names them in snake_case, 1.x in camelCase."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


def reply(result) -> dict:
    return {"isError": bool(field(result, "is_error", "isError")), "structured": field(result, "structured_content", "structuredContent"), "text": text_of(result)}


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


async def main(node: str, gymflow: str, root: str, logs: str) -> dict:
    params = StdioServerParameters(command=node, args=[gymflow, "mcp", "--root", root], cwd=root)
    out: dict = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            out["server"] = field(init, "server_info", "serverInfo").name
            out["tools"] = sorted(t.name for t in (await session.list_tools()).tools)
            schema = await session.call_tool("get_schema", {})
            out["schema"] = reply(schema)
            converted = await session.call_tool("convert_logs", {"path": logs, "out": "py-converted.jsonl"})
            out["convert"] = reply(converted)
            scored = await session.call_tool("score_trajectory", {"file": "py-converted.jsonl", "index": 0, "domain": "coding"})
            out["score"] = reply(scored)
            bad = await session.call_tool("score_trajectory", {"file": 7, "domain": "coding"})
            out["bad"] = reply(bad)
    return out


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(*sys.argv[1:5]))))
