"""The official `langgraph-sdk` async client streams a reply in `messages` mode, then reconnects
to the run's join stream with `last_event_id`, as a client that lost its connection does.

    python reconnect.py http://127.0.0.1:PORT MESSAGES TOKENS

The server must serve `talker`: one node streaming MESSAGES replies (ids `msg-0`, ...) of TOKENS
tokens `m{m}t{t} ` each. Prints `reconnect passed`, or fails with what went wrong.
"""

import asyncio
import sys

from langgraph_sdk import get_client


async def main(url, messages, tokens):
    client = get_client(url=url, timeout=30)
    thread = await client.threads.create()
    tid = thread["thread_id"]
    whole = {f"msg-{m}": "".join(f"m{m}t{t} " for t in range(tokens)) for m in range(messages)}

    live = [p async for p in client.runs.stream(tid, "talker", input={"log": []}, stream_mode="messages")]
    assert live[0].event == "metadata", live[0]
    run_id = live[0].data["run_id"]
    partials = [p for p in live if p.event == "messages/partial"]
    assert len(partials) == messages * tokens, f"a live reader gets every partial: {len(partials)}"
    last_live = {p.data[0]["id"]: p.data[0]["content"] for p in partials}
    assert last_live == whole, last_live

    # Lost after the fifth partial: the join stream goes on after it.
    last = partials[4].id
    resumed = [p async for p in client.runs.join_stream(tid, run_id, last_event_id=last)]
    ids = [int(p.id) for p in resumed]
    assert all(i > int(last) for i in ids), (last, ids)
    assert ids == sorted(ids), ids
    latest = {}
    for p in resumed:
        if p.event in ("messages/partial", "messages/complete"):
            latest[p.data[0]["id"]] = p.data[0]["content"]
    assert latest == whole, f"every message whole after a reconnect: {latest}"
    count = sum(1 for p in resumed if p.event == "messages/partial")
    assert count == messages, f"one partial per message, not {count}"
    print("reconnect passed", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
