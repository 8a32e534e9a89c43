"""The Python twins of the graphs tests/sdk.rs and examples/serve.rs serve, for running the same
flows and the same load on `langgraph dev` (langgraph.json in this folder registers them)."""

import asyncio
import operator
from typing import Annotated

# typing's TypedDict has no JSON Schema on Python < 3.12: the server would serve no input schema.
from typing_extensions import TypedDict

from langgraph.config import get_config, get_store
from langgraph.graph import START, StateGraph
from langgraph.types import interrupt


class State(TypedDict):
    log: Annotated[list[str], operator.add]


def a(s: State):
    return {"log": ["a"]}


def b(s: State):
    return {"log": ["b"]}


def ask(s: State):
    answer = interrupt({"question": "approve?"})
    return {"log": [f"ask:{answer}"]}


def boom(s: State):
    raise ValueError("boom happened")


async def slow(s: State):
    await asyncio.sleep(1.5)
    return {"log": ["slow"]}


async def wait(s: State):
    await asyncio.sleep(0.05)
    return {"log": ["waited"]}


def remember(s: State):
    get_store().put(("notes", "graph"), "last", {"log": s["log"]})
    return {"log": ["remembered"]}


def whoami(s: State):
    user = get_config()["configurable"].get("langgraph_auth_user")
    return {"log": [f"user:{user['identity'] if user else 'anonymous'}"]}


def greet(s: State):
    greeting = get_config()["configurable"].get("greeting", "none")
    return {"log": [f"greeting:{greeting}"]}


def after(s: State):
    return {"log": ["after"]}


def _chain(*nodes):
    builder = StateGraph(State)
    previous = START
    for fn in nodes:
        builder.add_node(fn.__name__, fn)
        builder.add_edge(previous, fn.__name__)
        previous = fn.__name__
    return builder.compile()


chain = _chain(a, b)
approve = _chain(a, ask, b)
failing = _chain(boom)
sleepy = _chain(slow)
remembering = _chain(remember)
pause = _chain(wait)
whoami = _chain(whoami)
configured = _chain(greet)


def _nested():
    builder = StateGraph(State)
    builder.add_node("inner", chain)
    builder.add_node("after", after)
    builder.add_edge(START, "inner")
    builder.add_edge("inner", "after")
    return builder.compile()


nested = _nested()
