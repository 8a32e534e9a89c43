"""The documented flows of the official `langgraph-sdk` client, run against a LangGraph API server.

    python sdk_flows.py http://127.0.0.1:PORT

The server must serve the graphs of graphs.py (chain, approve, failing, sleepy) under those ids.
Every flow runs, each prints `ok` or what went wrong; the exit status is the number of failures.
The same script runs against `langgraph dev` serving graphs.py and against mnemograph-server, so
the two answer the same client the same way.
"""

import json
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from langgraph_sdk import get_sync_client

from flows import finish, flow, status_of

client = get_sync_client(url=sys.argv[1], timeout=30)
# Tags this run's threads, so the script can run again on the same server.
RUN_TAG = uuid.uuid4().hex


def new_thread(**kw):
    return client.threads.create(**kw)["thread_id"]


def wait_status(thread_id, run_id, statuses, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = client.runs.get(thread_id, run_id)
        if run["status"] in statuses:
            return run
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} never reached {statuses}: {run['status']}")


@flow
def assistants_one_per_graph():
    found = {a["graph_id"]: a for a in client.assistants.search(limit=100)}
    assert {"chain", "approve", "failing", "sleepy", "remembering"} <= set(found), found.keys()
    chain = client.assistants.get(found["chain"]["assistant_id"])
    assert chain["graph_id"] == "chain"
    # The system assistant's id is the graph id's UUIDv5, whichever server derives it.
    assert chain["assistant_id"] == "608f7b9c-04e5-5cf2-a3f7-ba75a3719808", chain
    drawn = client.assistants.get_graph(chain["assistant_id"])
    assert [n["id"] for n in drawn["nodes"]] == ["__start__", "a", "b", "__end__"], drawn
    edges = [(e["source"], e["target"]) for e in drawn["edges"]]
    assert edges == [("__start__", "a"), ("a", "b"), ("b", "__end__")], drawn
    schemas = client.assistants.get_schemas(chain["assistant_id"])
    assert "log" in schemas["state_schema"]["properties"], schemas


@flow
def assistants_as_versioned_configurations():
    created = client.assistants.create(
        "configured",
        config={"configurable": {"greeting": "hello"}},
        metadata={"flow": RUN_TAG, "tier": "free"},
        name=f"greeter-{RUN_TAG}",
        description="says hello",
    )
    aid = created["assistant_id"]
    fields = {"assistant_id", "graph_id", "config", "context", "metadata", "name", "description", "version"}
    assert set(created) == fields | {"created_at", "updated_at"}, created
    assert (created["version"], created["graph_id"]) == (1, "configured"), created
    # The context mirrors the configurable values, as the server keeps them.
    assert created["context"] == {"greeting": "hello"}, created
    assert status_of(lambda: client.assistants.create("configured", assistant_id=aid)) == 409
    same = client.assistants.create("configured", assistant_id=aid, if_exists="do_nothing")
    assert (same["version"], same["name"]) == (1, created["name"]), same

    # Each update is the next version, made the latest; metadata merges.
    v2 = client.assistants.update(aid, config={"configurable": {"greeting": "hi"}}, metadata={"tier": "paid"})
    assert v2["version"] == 2 and v2["metadata"] == {"flow": RUN_TAG, "tier": "paid"}, v2
    v3 = client.assistants.update(aid, name=f"greeter3-{RUN_TAG}")
    assert v3["version"] == 3 and v3["config"]["configurable"] == {"greeting": "hi"}, v3
    assert client.assistants.get(aid)["version"] == 3
    versions = client.assistants.get_versions(aid)
    assert [v["version"] for v in versions] == [3, 2, 1], versions
    assert set(versions[0]) == fields | {"created_at"}, versions
    assert versions[2]["config"]["configurable"] == {"greeting": "hello"}, versions
    paid = client.assistants.get_versions(aid, metadata={"tier": "paid"})
    assert [v["version"] for v in paid] == [3, 2], paid
    assert [v["version"] for v in client.assistants.get_versions(aid, limit=1, offset=1)] == [2]

    # A run on the assistant runs its graph with its configuration under the run's.
    assert client.runs.wait(None, aid, input={"log": []})["log"] == ["greeting:hi"]
    mine = client.runs.wait(None, aid, input={"log": []}, config={"configurable": {"greeting": "yo"}})
    assert mine["log"] == ["greeting:yo"], mine
    tid = new_thread()
    client.runs.wait(tid, aid, input={"log": []})
    assert client.threads.get(tid)["metadata"]["assistant_id"] == aid

    back = client.assistants.set_latest(aid, 1)
    assert back["version"] == 1 and back["config"]["configurable"] == {"greeting": "hello"}, back
    assert client.assistants.get(aid)["version"] == 1
    assert client.runs.wait(None, aid, input={"log": []})["log"] == ["greeting:hello"]
    assert status_of(lambda: client.assistants.set_latest(aid, 42)) == 404
    assert client.assistants.update(aid, metadata={"tier": "gold"})["version"] == 4

    # An assistant given a context runs with it.
    ctx = client.assistants.create("configured", context={"greeting": "ctx"}, metadata={"flow": RUN_TAG})
    assert ctx["config"]["configurable"] == {"greeting": "ctx"}, ctx
    assert client.runs.wait(None, ctx["assistant_id"], input={"log": []})["log"] == ["greeting:ctx"]
    client.assistants.delete(ctx["assistant_id"])

    # Search: filters, order, fields; count.
    other = client.assistants.create("configured", metadata={"flow": RUN_TAG}, name=f"another-{RUN_TAG}")
    found = client.assistants.search(
        metadata={"flow": RUN_TAG}, sort_by="name", sort_order="asc", select=["assistant_id", "name"]
    )
    assert [a["assistant_id"] for a in found] == [other["assistant_id"], aid], found
    assert all(set(a) == {"assistant_id", "name"} for a in found), found
    newest = client.assistants.search(metadata={"flow": RUN_TAG}, sort_by="created_at", limit=1)
    assert [a["assistant_id"] for a in newest] == [other["assistant_id"]], newest
    assert client.assistants.count(metadata={"flow": RUN_TAG}) == 2
    assert client.assistants.count(metadata={"flow": RUN_TAG}, graph_id="configured") == 2
    assert client.assistants.count(name=f"GREETER-{RUN_TAG}") == 1

    # Bad input is refused with the status the server gives it.
    assert status_of(lambda: client.assistants.create("no-such-graph")) == 404
    both = {"config": {"configurable": {"a": 1}}, "context": {"b": 2}}
    assert status_of(lambda: client.assistants.create("configured", **both)) == 400
    assert status_of(lambda: client.assistants.search(sort_by="version")) == 422
    assert status_of(lambda: client.assistants.create("configured", assistant_id="not-a-uuid")) == 422

    client.assistants.delete(aid)
    client.assistants.delete(other["assistant_id"])
    assert status_of(lambda: client.assistants.get(aid)) == 404
    assert status_of(lambda: client.assistants.get_versions(aid)) == 404
    assert status_of(lambda: client.assistants.delete(aid)) == 404
    assert client.assistants.count(metadata={"flow": RUN_TAG}) == 0


@flow
def an_assistants_metadata_reaches_its_runs_and_checkpoints():
    made = client.assistants.create("chain", metadata={"flow": RUN_TAG, "team": "blue"})
    aid = made["assistant_id"]
    tid = new_thread(metadata={"topic": "t"})
    run = client.runs.create(tid, aid, input={"log": []}, metadata={"asked": 1})
    # The assistant's, the thread's and the request's, with the assistant's id.
    for key, value in {"team": "blue", "topic": "t", "asked": 1, "assistant_id": aid}.items():
        assert run["metadata"].get(key) == value, (key, run["metadata"])
    client.runs.join(tid, run["run_id"])
    state = client.threads.get_state(tid)
    assert state["metadata"]["team"] == "blue" and state["metadata"]["asked"] == 1, state["metadata"]
    client.assistants.delete(aid)


@flow
def deleting_an_assistant_interrupts_its_runs():
    made = client.assistants.create("sleepy", metadata={"flow": RUN_TAG})
    aid = made["assistant_id"]
    tid = new_thread()
    running = client.runs.create(tid, aid, input={"log": []})
    waiting = client.runs.create(tid, aid, input={"log": []}, multitask_strategy="enqueue")
    wait_status(tid, running["run_id"], {"running"})
    other = client.runs.create(new_thread(), "sleepy", input={"log": []})
    client.assistants.delete(aid)
    for run_id in (running["run_id"], waiting["run_id"]):
        assert wait_status(tid, run_id, {"interrupted", "success", "error"})["status"] == "interrupted"
    # Another assistant's run goes on.
    assert client.runs.join(other["thread_id"], other["run_id"])["log"] == ["slow"]


@flow
def subgraphs_and_the_drawing_opened_to_them():
    nested = next(a for a in client.assistants.search(graph_id="nested") if a["metadata"].get("created_by") == "system")
    aid = nested["assistant_id"]
    found = client.assistants.get_subgraphs(aid)
    assert list(found) == ["inner"], found
    keys = {"input_schema", "output_schema", "state_schema", "config_schema", "context_schema"}
    assert keys <= set(found["inner"]), found
    assert found["inner"]["state_schema"]["properties"]["log"]["items"]["type"] == "string", found
    assert list(client.assistants.get_subgraphs(aid, namespace="inner", recurse=True)) == ["inner"]
    assert client.assistants.get_subgraphs(aid, namespace="nope") == {}
    assert client.assistants.get_subgraphs(client.assistants.search(graph_id="chain")[0]["assistant_id"]) == {}

    def drawn(**kw):
        graph = client.assistants.get_graph(aid, **kw)
        return sorted(n["id"] for n in graph["nodes"]), sorted((e["source"], e["target"]) for e in graph["edges"])

    nodes, edges = drawn()
    assert nodes == ["__end__", "__start__", "after", "inner"], nodes
    assert edges == [("__start__", "inner"), ("after", "__end__"), ("inner", "after")], edges
    for xray in (True, 1):
        nodes, edges = drawn(xray=xray)
        assert nodes == ["__end__", "__start__", "after", "inner:a", "inner:b"], nodes
        expected = [("__start__", "inner:a"), ("after", "__end__"), ("inner:a", "inner:b"), ("inner:b", "after")]
        assert edges == expected, edges
    schemas = client.assistants.get_schemas(aid)
    assert schemas["graph_id"] == "nested" and keys <= set(schemas), schemas
    for key in ("input_schema", "state_schema"):
        log = schemas[key]["properties"]["log"]
        assert (log["type"], log["items"]["type"]) == ("array", "string"), schemas


@flow
def threads_create_get_search_patch():
    tid = new_thread(metadata={"user": "u1", "flow": RUN_TAG})
    thread = client.threads.get(tid)
    assert thread["status"] == "idle" and thread["metadata"]["user"] == "u1", thread
    found = client.threads.search(metadata={"flow": RUN_TAG})
    assert [t["thread_id"] for t in found] == [tid], found
    client.threads.update(tid, metadata={"extra": 1})
    assert client.threads.get(tid)["metadata"]["extra"] == 1
    assert status_of(lambda: client.threads.create(thread_id=tid)) == 409
    same = client.threads.create(thread_id=tid, if_exists="do_nothing")
    assert same["thread_id"] == tid


@flow
def stream_values_and_updates():
    tid = new_thread()
    parts = list(
        client.runs.stream(tid, "chain", input={"log": ["x"]}, stream_mode=["values", "updates"])
    )
    events = [p.event for p in parts]
    assert events[0] == "metadata", events
    assert "run_id" in parts[0].data, parts[0]
    updates = [p.data for p in parts if p.event == "updates"]
    assert updates == [{"a": {"log": ["a"]}}, {"b": {"log": ["b"]}}], updates
    values = [p.data["log"] for p in parts if p.event == "values"]
    assert values == [["x"], ["x", "a"], ["x", "a", "b"]], values
    thread = client.threads.get(tid)
    assert thread["status"] == "idle" and thread["values"]["log"] == ["x", "a", "b"], thread


@flow
def message_chunks_carry_the_run_and_where_they_came_from():
    tid = new_thread(metadata={"topic": RUN_TAG})
    parts = list(
        client.runs.stream(
            tid, "chat", input={"messages": [{"type": "human", "content": "hi"}]}, stream_mode="messages-tuple"
        )
    )
    run_id = parts[0].data["run_id"]
    chunks = [p.data for p in parts if p.event == "messages"]
    assert len(chunks) > 1, chunks
    text = "".join(chunk["content"] for chunk, _ in chunks)
    assert text == "You said: hi", text
    for chunk, meta in chunks:
        assert chunk["type"] == "AIMessageChunk" and chunk["tool_call_chunks"] == [], chunk
        expected = {"run_id": run_id, "thread_id": tid, "graph_id": "chat", "langgraph_node": "echo",
                    "langgraph_step": 1, "topic": RUN_TAG}
        assert {k: meta.get(k) for k in expected} == expected, meta
        assert meta["assistant_id"] == "eb6db400-e3c8-5d06-a834-015cb89efe69", meta
        ns = meta["langgraph_checkpoint_ns"]
        assert ns.startswith("echo:") and meta["checkpoint_ns"] == ns, meta


@flow
def state_and_history():
    tid = new_thread()
    client.runs.wait(tid, "chain", input={"log": []})
    state = client.threads.get_state(tid)
    assert state["values"]["log"] == ["a", "b"] and state["next"] == [], state
    history = client.threads.get_history(tid, limit=10)
    assert [h["next"] for h in history] == [[], ["b"], ["a"], ["__start__"]], [h["next"] for h in history]
    assert [h["metadata"]["step"] for h in history] == [2, 1, 0, -1]
    assert history[1]["checkpoint"]["checkpoint_id"] == history[0]["parent_checkpoint"]["checkpoint_id"]
    older = client.threads.get_state(tid, checkpoint_id=history[1]["checkpoint"]["checkpoint_id"])
    assert older["values"]["log"] == ["a"], older
    limited = client.threads.get_history(tid, limit=2)
    assert len(limited) == 2


@flow
def interrupt_then_resume_with_command():
    tid = new_thread()
    out = client.runs.wait(tid, "approve", input={"log": []})
    assert out["log"] == ["a"], out
    [pending] = out["__interrupt__"]
    assert pending["value"] == {"question": "approve?"}, pending
    thread = client.threads.get(tid)
    assert thread["status"] == "interrupted", thread
    state = client.threads.get_state(tid)
    assert state["next"] == ["ask"] and state["interrupts"][0]["id"] == pending["id"], state
    out = client.runs.wait(tid, "approve", command={"resume": "yes"})
    assert out["log"] == ["a", "ask:yes", "b"], out
    assert client.threads.get(tid)["status"] == "idle"


@flow
def command_update_and_goto_as_input():
    tid = new_thread()
    client.runs.wait(tid, "approve", input={"log": []})
    # At the interrupt: an update, a destination and the answer, together.
    command = {"update": {"log": ["edited"]}, "goto": "b", "resume": "yes"}
    out = client.runs.wait(tid, "approve", command=command)
    assert out["log"] == ["a", "edited", "ask:yes", "b", "b"], out
    history = client.threads.get_history(tid, limit=10)
    assert [h["next"] for h in history] == [[], ["b"], ["ask"], ["a"], ["__start__"]], history
    assert [h["metadata"]["step"] for h in history] == [3, 2, 1, 0, -1], history
    # The interrupted checkpoint holds the command's writes: its values show the update.
    assert history[2]["values"]["log"] == ["a", "edited"], history[2]
    # On the finished thread: updates as [field, value] pairs and a `Send` to a node.
    command = {"update": [["log", ["p1"]], ["log", ["p2"]]], "goto": {"node": "b", "input": {"log": ["sent"]}}}
    out = client.runs.wait(tid, "approve", command=command)
    assert out["log"] == ["a", "edited", "ask:yes", "b", "b", "p1", "p2", "b"], out
    assert client.threads.get(tid)["status"] == "idle"


@flow
def stream_stops_at_interrupt():
    tid = new_thread()
    parts = list(client.runs.stream(tid, "approve", input={"log": []}, stream_mode="updates"))
    last = parts[-1]
    assert last.event == "updates" and "__interrupt__" in last.data, parts
    resumed = list(
        client.runs.stream(
            tid, "approve", command={"resume": {pending["id"]: "by-id" for pending in last.data["__interrupt__"]}},
            stream_mode="values",
        )
    )
    assert resumed[-1].data["log"] == ["a", "ask:by-id", "b"], resumed


@flow
def background_run_and_join():
    tid = new_thread()
    run = client.runs.create(tid, "sleepy", input={"log": []})
    assert run["status"] in ("pending", "running"), run
    assert client.threads.get(tid)["status"] == "busy"
    out = client.runs.join(tid, run["run_id"])
    assert out["log"] == ["slow"], out
    assert client.runs.get(tid, run["run_id"])["status"] == "success"
    assert [r["run_id"] for r in client.runs.list(tid)] == [run["run_id"]]


@flow
def join_stream_of_a_background_run():
    tid = new_thread()
    run = client.runs.create(tid, "sleepy", input={"log": []}, stream_mode=["values"])
    parts = list(client.runs.join_stream(tid, run["run_id"]))
    values = [p.data for p in parts if p.event == "values"]
    assert values and values[-1]["log"] == ["slow"], parts


@flow
def enqueue_on_a_busy_thread():
    tid = new_thread()
    first = client.runs.create(tid, "sleepy", input={"log": []})
    second = client.runs.create(tid, "chain", input={"log": []}, multitask_strategy="enqueue")
    assert client.runs.get(tid, second["run_id"])["status"] == "pending"
    out = client.runs.join(tid, second["run_id"])
    assert out["log"] == ["slow", "a", "b"], out
    assert client.runs.get(tid, first["run_id"])["status"] == "success"


@flow
def reject_on_a_busy_thread():
    tid = new_thread()
    first = client.runs.create(tid, "sleepy", input={"log": []})
    status = status_of(lambda: client.runs.create(tid, "chain", input={"log": []}, multitask_strategy="reject"))
    assert status == 409, status
    client.runs.join(tid, first["run_id"])


@flow
def interrupt_strategy_stops_the_run_in_progress():
    tid = new_thread()
    first = client.runs.create(tid, "sleepy", input={"log": []})
    wait_status(tid, first["run_id"], ("running",))
    second = client.runs.create(tid, "chain", input={"log": []}, multitask_strategy="interrupt")
    out = client.runs.join(tid, second["run_id"])
    assert out["log"] == ["a", "b"], out
    assert client.runs.get(tid, first["run_id"])["status"] == "interrupted"


@flow
def cancel_a_running_run():
    tid = new_thread()
    run = client.runs.create(tid, "sleepy", input={"log": []})
    wait_status(tid, run["run_id"], ("running",))
    client.runs.cancel(tid, run["run_id"], wait=True)
    assert client.runs.get(tid, run["run_id"])["status"] == "interrupted"
    assert client.threads.get(tid)["status"] != "busy"


@flow
def a_failing_run_reports_its_error():
    tid = new_thread()
    out = client.runs.wait(tid, "failing", input={"log": []}, raise_error=False)
    assert "boom happened" in out["__error__"]["message"], out
    try:
        client.runs.wait(tid, "failing", input={"log": []})
        raise AssertionError("wait did not raise the run's error")
    except Exception as e:  # noqa: BLE001 - the SDK raises a bare Exception
        assert "boom happened" in str(e), e
    parts = list(client.runs.stream(tid, "failing", input={"log": []}))
    assert parts[-1].event == "error" and "boom happened" in parts[-1].data["message"], parts
    assert client.threads.get(tid)["status"] == "error"
    runs = client.runs.list(tid)
    assert [r["status"] for r in runs] == ["error", "error", "error"], runs


@flow
def update_state_then_continue():
    tid = new_thread()
    client.runs.wait(tid, "chain", input={"log": []})
    saved = client.threads.update_state(tid, {"log": ["u"]}, as_node="b")
    assert saved["checkpoint"]["checkpoint_id"], saved
    assert client.threads.get_state(tid)["values"]["log"] == ["a", "b", "u"]


@flow
def copy_and_delete_threads():
    tid = new_thread()
    client.runs.wait(tid, "chain", input={"log": []})
    copy = client.threads.copy(tid)
    assert copy["thread_id"] != tid
    assert client.threads.get_state(copy["thread_id"])["values"]["log"] == ["a", "b"]
    client.threads.delete(tid)
    assert status_of(lambda: client.threads.get(tid)) == 404
    assert client.threads.get_state(copy["thread_id"])["values"]["log"] == ["a", "b"]


class _Hooks(BaseHTTPRequestHandler):
    """A webhook receiver: keeps each POSTed JSON body, answers 200."""

    received = []

    def do_POST(self):  # noqa: N802 - the name http.server calls
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        _Hooks.received.append(json.loads(body))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@flow
def webhook_receives_the_final_record():
    receiver = ThreadingHTTPServer(("127.0.0.1", 0), _Hooks)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    hook = f"http://127.0.0.1:{receiver.server_address[1]}/hook"
    try:
        tid = new_thread()
        try:
            client.runs.wait(tid, "chain", input={"log": []}, webhook=hook)
        except Exception as e:  # noqa: BLE001 - the SDK raises a bare Exception
            if "built without" in getattr(getattr(e, "response", None), "text", str(e)):
                print("      (the server is built without webhooks; skipped)", flush=True)
                return
            raise
        run_id = client.runs.list(tid)[0]["run_id"]
        deadline = time.monotonic() + 20
        while not _Hooks.received and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(_Hooks.received) == 1, _Hooks.received
        record = _Hooks.received[0]
        assert record["run_id"] == run_id and record["thread_id"] == tid, record
        assert record["status"] == "success", record
        assert record["values"]["log"] == ["a", "b"], record
        assert record["kwargs"]["webhook"] == hook, record
        for field in ("run_started_at", "run_ended_at", "webhook_sent_at", "created_at", "assistant_id"):
            assert record[field], (field, record)
    finally:
        receiver.shutdown()


@flow
def stateless_runs():
    out = client.runs.wait(None, "chain", input={"log": ["s"]})
    assert out["log"] == ["s", "a", "b"], out
    parts = list(client.runs.stream(None, "chain", input={"log": []}, stream_mode="updates"))
    assert [p.event for p in parts] == ["metadata", "updates", "updates"], parts


@flow
def errors_are_statuses_with_a_detail():
    assert status_of(lambda: client.threads.get("00000000-0000-0000-0000-000000000000")) == 404
    tid = new_thread()
    assert status_of(lambda: client.runs.wait(tid, "no-such-graph", input={})) == 422
    unknown = "00000000-0000-0000-0000-000000000001"
    assert status_of(lambda: client.runs.wait(tid, unknown, input={})) == 404
    assert status_of(lambda: client.assistants.get(unknown)) == 404
    assert status_of(lambda: client.runs.wait("00000000-0000-0000-0000-000000000000", "chain", input={})) == 404


@flow
def store_items_namespaces_and_search():
    ns = ["users", RUN_TAG]
    client.store.put_item(ns, "food", {"likes": "pizza", "stars": 5})
    client.store.put_item(ns, "drink", {"likes": "tea", "stars": 3})
    item = client.store.get_item(ns, "food")
    assert item["value"] == {"likes": "pizza", "stars": 5} and item["namespace"] == ns, item
    assert item["created_at"] and item["updated_at"]
    assert client.store.get_item(ns, "missing") is None
    found = client.store.search_items(["users"], filter={"likes": "tea"})["items"]
    assert [i["key"] for i in found] == ["drink"], found
    ranged = client.store.search_items(["users", RUN_TAG], filter={"stars": {"$gte": 4}})["items"]
    assert [i["key"] for i in ranged] == ["food"], ranged
    spaces = client.store.list_namespaces(prefix=["users"])["namespaces"]
    assert ns in spaces, spaces
    client.store.delete_item(ns, "food")
    assert client.store.get_item(ns, "food") is None
    assert status_of(lambda: client.store.put_item(["langgraph"], "k", {})) == 400
    assert status_of(lambda: client.store.put_item(ns, "k", [1])) == 422


@flow
def nodes_write_the_store_the_api_serves():
    client.runs.wait(None, "remembering", input={"log": ["x"]})
    item = client.store.get_item(["notes", "graph"], "last")
    assert item["value"] == {"log": ["x"]}, item


finish()
