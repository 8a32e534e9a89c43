"""The Python twins of the graphs tests/sdk.rs and examples/serve/graphs.rs serve, for running
the same flows and the same load on `langgraph dev` (langgraph.json in this folder registers
them)."""

import asyncio
import operator
from typing import Annotated

# typing's TypedDict has no JSON Schema on Python < 3.12: the server would serve no input schema.
from typing_extensions import TypedDict

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langgraph.config import get_config, get_store
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import interrupt


class State(TypedDict):
    """The state of every test graph: a log that nodes append to."""

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


# The pause before each token of a `chat` reply; tests/support/graphs.rs types at the same pace.
TOKEN_GAP = 0.03


def _type_out(messages, text):
    """`text` from a fake chat model that streams it a character at a time: in the `messages`
    stream mode LangGraph sends each character as a chunk, as it does a real model's tokens."""
    return FakeListChatModel(responses=[text], sleep=TOKEN_GAP).invoke(messages)


def echo(s: MessagesState):
    said = s["messages"][-1].content
    return {"messages": [_type_out(s["messages"], f"You said: {said}")]}


def confirm(s: MessagesState):
    answer = interrupt({"question": "Send this reply?"})
    return {"messages": [_type_out(s["messages"], f"Approved: {answer}")]}


def _chain(*nodes, state=State):
    builder = StateGraph(state)
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
chat = _chain(echo, confirm, state=MessagesState)


def _nested():
    builder = StateGraph(State)
    builder.add_node("inner", chain)
    builder.add_node("after", after)
    builder.add_edge(START, "inner")
    builder.add_edge("inner", "after")
    return builder.compile()


nested = _nested()
