"""Calls every public method of the official `langgraph-sdk` sync client once, with ordinary
arguments, against a LangGraph API server, and writes what each answered as JSON.

    python probe.py http://127.0.0.1:PORT REPORT.json

The methods are found by introspection, so a method a later SDK pin adds fails the probe until
it has a call recipe here. The report holds, per method, whether the call succeeded and the shape
of what it returned: keys and JSON types, recursively, a list by its first element, a stream by
the first part of each event; values such as ids and timestamps are left out, so the reports of
two servers compare; a failure is reported with its HTTP status. The server must serve the graphs
of graphs.py under their ids. The exit status is the number of methods that failed.
"""

import json
import sys
import threading
import traceback
import uuid

import httpx
from langgraph_sdk import get_sync_client

URL, REPORT = sys.argv[1], sys.argv[2]
client = get_sync_client(url=URL, timeout=30)
# Tags what this probe makes, so its searches find only its own and it can run again.
TAG = f"probe-{uuid.uuid4().hex[:12]}"
META = {"probe": TAG}
# The sub-clients the probe covers; any other public attribute of the client fails the probe.
SUB_CLIENTS = ("assistants", "threads", "runs", "crons", "store")
# The client's own plumbing, not API methods.
CLIENT_PLUMBING = {"http", "close"}
# `threads.stream` opens a session of the experimental thread-centric streaming protocol (v3),
# a separate protocol from the run streams every other method speaks; it is left out.
SKIPPED = {"threads.stream"}
# How long a method may take: every call answers within a few seconds on either server.
TIMEOUT = 20
# A cron schedule that never fires while the probe runs: midnight on the first of January.
YEARLY = "0 0 1 1 *"


def shape(value):
    """The JSON shape of `value`: objects by their keys, lists by their first element, scalars by
    their JSON type."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [shape(value[0])] if value else []
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    raise TypeError(f"not JSON: {type(value).__name__}")


def stream_shape(parts):
    """A stream as an object from each event's name to the shape of its first part's data."""
    events = {}
    for part in parts:
        events.setdefault(part.event, shape(part.data))
    return {"stream": events}


def until_run_done(stream):
    """The parts of a stream up to its first `run_done` (a thread's stream stays open after)."""
    parts = []
    for part in stream:
        parts.append(part)
        if part.event == "metadata" and part.data.get("status") == "run_done":
            break
    return parts


def within(seconds, call):
    """What `call` returns, or raises; a call that has not returned after `seconds` fails with
    `TimeoutError` (left running in a daemon thread), so a method that hangs fails the probe
    rather than stall it."""
    outcome = {}

    def run():
        try:
            outcome["value"] = call()
        except Exception as e:  # noqa: BLE001 - re-raised in the caller's thread
            outcome["error"] = e

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise TimeoutError(f"no answer within {seconds} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


recipes = {}
state = {}


def recipe(name):
    """Registers the call of method `name`; recipes run in the order they are written."""

    def register(fn):
        recipes[name] = fn
        return fn

    return register


@recipe("assistants.create")
def _():
    created = client.assistants.create(
        "configured", config={"configurable": {"greeting": "hi"}}, metadata=META, name=TAG, description="probe"
    )
    state["assistant"] = created["assistant_id"]
    return created


@recipe("assistants.get")
def _():
    return client.assistants.get(state["assistant"])


@recipe("assistants.update")
def _():
    return client.assistants.update(state["assistant"], config={"configurable": {"greeting": "hello"}})


@recipe("assistants.get_versions")
def _():
    return client.assistants.get_versions(state["assistant"])


@recipe("assistants.set_latest")
def _():
    return client.assistants.set_latest(state["assistant"], 1)


@recipe("assistants.search")
def _():
    return client.assistants.search(metadata=META)


@recipe("assistants.count")
def _():
    return client.assistants.count(metadata=META)


@recipe("assistants.get_graph")
def _():
    return client.assistants.get_graph(state["assistant"])


@recipe("assistants.get_schemas")
def _():
    return client.assistants.get_schemas(state["assistant"])


@recipe("assistants.get_subgraphs")
def _():
    return client.assistants.get_subgraphs(state["assistant"])


@recipe("threads.create")
def _():
    created = client.threads.create(metadata=META)
    state["thread"] = created["thread_id"]
    return created


@recipe("threads.update")
def _():
    return client.threads.update(state["thread"], metadata={"step": "updated"})


@recipe("runs.create")
def _():
    run = client.runs.create(
        state["thread"], "chain", input={"log": []}, metadata=META, stream_mode=["values", "updates"],
        stream_resumable=True,
    )
    state["run"] = run["run_id"]
    return run


@recipe("runs.join")
def _():
    return client.runs.join(state["thread"], state["run"])


@recipe("runs.get")
def _():
    return client.runs.get(state["thread"], state["run"])


@recipe("runs.list")
def _():
    return client.runs.list(state["thread"])


@recipe("runs.join_stream")
def _():
    return stream_shape(client.runs.join_stream(state["thread"], state["run"], last_event_id="-"))


@recipe("runs.wait")
def _():
    return client.runs.wait(state["thread"], "chain", input={"log": []})


@recipe("runs.stream")
def _():
    return stream_shape(
        client.runs.stream(state["thread"], "chain", input={"log": []}, stream_mode=["values", "updates"])
    )


@recipe("threads.get")
def _():
    return client.threads.get(state["thread"])


@recipe("threads.search")
def _():
    return client.threads.search(metadata=META)


@recipe("threads.count")
def _():
    return client.threads.count(metadata=META)


@recipe("threads.get_state")
def _():
    return client.threads.get_state(state["thread"])


@recipe("threads.update_state")
def _():
    return client.threads.update_state(state["thread"], {"log": ["probe"]}, as_node="b")


@recipe("threads.get_history")
def _():
    return client.threads.get_history(state["thread"], limit=3)


@recipe("threads.join_stream")
def _():
    return stream_shape(until_run_done(client.threads.join_stream(state["thread"], last_event_id="-")))


@recipe("threads.copy")
def _():
    copied = client.threads.copy(state["thread"])
    state["copy"] = copied["thread_id"] if isinstance(copied, dict) else None
    return copied


@recipe("runs.create_batch")
def _():
    payload = {"assistant_id": "chain", "input": {"log": []}, "metadata": META}
    return client.runs.create_batch([payload, payload])


@recipe("runs.cancel")
def _():
    delayed = client.runs.create(state["thread"], "chain", input={"log": []}, after_seconds=60)
    return client.runs.cancel(state["thread"], delayed["run_id"])


@recipe("runs.cancel_many")
def _():
    delayed = client.runs.create(state["thread"], "chain", input={"log": []}, after_seconds=60)
    return client.runs.cancel_many(thread_id=state["thread"], run_ids=[delayed["run_id"]])


@recipe("runs.delete")
def _():
    return client.runs.delete(state["thread"], state["run"])


@recipe("crons.create")
def _():
    cron = client.crons.create("chain", schedule=YEARLY, input={"log": []}, metadata=META)
    state["cron"] = cron["cron_id"]
    return cron


@recipe("crons.create_for_thread")
def _():
    cron = client.crons.create_for_thread(
        state["thread"], "chain", schedule=YEARLY, input={"log": []}, metadata=META
    )
    state["thread_cron"] = cron["cron_id"]
    return cron


@recipe("crons.update")
def _():
    return client.crons.update(state["cron"], schedule="0 0 2 1 *")


# The thread's cron only: which of the probe's two crons comes first is the server's choice.
@recipe("crons.search")
def _():
    return client.crons.search(metadata=META, thread_id=state["thread"])


@recipe("crons.count")
def _():
    return client.crons.count(metadata=META)


@recipe("crons.delete")
def _():
    client.crons.delete(state["thread_cron"])
    return client.crons.delete(state["cron"])


@recipe("store.put_item")
def _():
    return client.store.put_item([TAG, "notes"], "probe", {"text": "hello"})


@recipe("store.get_item")
def _():
    return client.store.get_item([TAG, "notes"], "probe")


@recipe("store.search_items")
def _():
    return client.store.search_items([TAG])


@recipe("store.list_namespaces")
def _():
    return client.store.list_namespaces(prefix=[TAG])


@recipe("store.delete_item")
def _():
    return client.store.delete_item([TAG, "notes"], "probe")


@recipe("threads.prune")
def _():
    return client.threads.prune([state["copy"]])


@recipe("threads.delete")
def _():
    return client.threads.delete(state["thread"])


@recipe("assistants.delete")
def _():
    return client.assistants.delete(state["assistant"])


def methods():
    """Every public method of the sub-clients, as `sub.method`; fails on a sub-client the probe
    does not know."""
    unknown = {a for a in dir(client) if not a.startswith("_")} - set(SUB_CLIENTS) - CLIENT_PLUMBING
    assert not unknown, f"the client has attributes the probe does not cover: {sorted(unknown)}"
    found = set()
    for sub in SUB_CLIENTS:
        obj = getattr(client, sub)
        found |= {f"{sub}.{m}" for m in dir(obj) if not m.startswith("_") and callable(getattr(obj, m))}
    return found


def main():
    found = methods()
    missing = sorted(found - SKIPPED - set(recipes))
    assert not missing, f"methods with no call recipe: {missing}"
    stale = sorted(set(recipes) - found)
    assert not stale, f"recipes for methods the client does not have: {stale}"
    report, failed = {"skipped": sorted(SKIPPED), "methods": {}}, 0
    for name, call in recipes.items():
        try:
            report["methods"][name] = {"ok": True, "shape": shape(within(TIMEOUT, call))}
            print(f"ok    {name}", flush=True)
        except Exception as e:  # noqa: BLE001 - every failure is reported, then the next method runs
            failed += 1
            outcome = {"ok": False, "error": f"{type(e).__name__}: {e}"}
            if isinstance(e, httpx.HTTPStatusError):
                outcome["status"] = e.response.status_code
            report["methods"][name] = outcome
            print(f"FAIL  {name}\n{traceback.format_exc()}", flush=True)
    with open(REPORT, "w") as out:
        json.dump(report, out, indent=1, sort_keys=True)
    print(f"{len(recipes)} methods called, {failed} failed", flush=True)
    sys.exit(failed)


main()
