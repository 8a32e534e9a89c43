"""The rest of the official `langgraph-sdk` client's surface, run against a LangGraph API server:
batches of runs, cancelling many runs, pruning threads, a thread's stream across its runs, and
the run-level options (breakpoints, delayed runs, durability, stateless threads kept or not).

    python surface_flows.py http://127.0.0.1:PORT

The server must serve the graphs of graphs.py under their ids. The same script runs against
`langgraph dev` and against mnemograph-server; where the two answer differently by design the
flow says so and checks each one's answer. The exit status is the number of failures.
"""

import sys
import threading
import time
import uuid
from datetime import datetime

import httpx
from langgraph_sdk import get_sync_client

from flows import finish, flow, status_of

URL = sys.argv[1]
client = get_sync_client(url=URL, timeout=30)
# LangGraph's own server names the langgraph version it runs in `/info`.
IS_LANGGRAPH = "langgraph_py_version" in httpx.get(f"{URL}/info").json()


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


def at(stamp):
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def read_thread_stream(thread_id, runs_done, timeout=20.0, **kw):
    """The parts of the thread's stream up to its `runs_done`-th run end (the stream itself stays
    open), read in a thread of its own; `started` is set once the request is under way."""
    parts, started = [], threading.Event()

    def read():
        stream = client.threads.join_stream(thread_id, **kw)
        started.set()
        done = 0
        for part in stream:
            parts.append(part)
            if part.event == "metadata" and part.data.get("status") == "run_done":
                done += 1
                if done == runs_done:
                    return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader, parts, started


@flow
def create_batch_runs_stateless_runs_in_the_background():
    runs = client.runs.create_batch(
        [
            {"assistant_id": "chain", "input": {"log": ["one"]}},
            {"assistant_id": "chain", "input": {"log": ["two"]}, "on_completion": "keep"},
        ]
    )
    assert len(runs) == 2 and all(r["status"] in ("pending", "running", "success") for r in runs), runs
    assert runs[0]["thread_id"] != runs[1]["thread_id"], runs
    kept = runs[1]
    assert client.runs.join(kept["thread_id"], kept["run_id"])["log"] == ["two", "a", "b"]
    assert client.threads.get(kept["thread_id"])["values"]["log"] == ["two", "a", "b"]
    assert status_of(lambda: client.runs.create_batch([])) == 422
    bad = [{"assistant_id": "chain", "input": {"log": []}, "on_completion": "sometimes"}]
    assert status_of(lambda: client.runs.create_batch(bad)) == 422


@flow
def cancel_many_by_thread_and_run_ids():
    tid = new_thread()
    first = client.runs.create(tid, "sleepy", input={"log": []})
    second = client.runs.create(tid, "chain", input={"log": []}, multitask_strategy="enqueue")
    wait_status(tid, first["run_id"], ("running",))
    client.runs.cancel_many(thread_id=tid, run_ids=[first["run_id"], second["run_id"]])
    assert client.runs.get(tid, second["run_id"])["status"] == "interrupted"
    wait_status(tid, first["run_id"], ("interrupted",))
    # Nothing left to cancel, or nothing of that id: not found.
    assert status_of(lambda: client.runs.cancel_many(thread_id=tid, run_ids=[first["run_id"]])) == 404
    unknown = str(uuid.uuid4())
    assert status_of(lambda: client.runs.cancel_many(thread_id=tid, run_ids=[unknown])) == 404


@flow
def cancel_many_refuses_status_beside_ids():
    tid = new_thread()
    assert status_of(lambda: client.runs.cancel_many(status="all", thread_id=tid)) == 422
    assert status_of(lambda: client.runs.cancel_many(status="all", run_ids=[str(uuid.uuid4())])) == 422
    assert status_of(lambda: client.runs.cancel_many()) == 422
    assert status_of(lambda: client.runs.cancel_many(thread_id="not-a-uuid", run_ids=[str(uuid.uuid4())])) == 422


@flow
def cancel_many_by_status_with_rollback():
    tid = new_thread()
    delayed = client.runs.create(tid, "chain", input={"log": []}, after_seconds=30)
    assert client.runs.get(tid, delayed["run_id"])["status"] == "pending"
    client.runs.cancel_many(status="pending", action="rollback")
    # A pending run rolled back is deleted, and its thread freed.
    assert status_of(lambda: client.runs.get(tid, delayed["run_id"])) == 404
    if not IS_LANGGRAPH:
        # LangGraph's in-memory server leaves the thread `busy` with no run left on it.
        assert client.threads.get(tid)["status"] == "idle"
    other = client.runs.create(tid, "chain", input={"log": []}, after_seconds=30)
    client.runs.cancel_many(status="all")
    assert client.runs.get(tid, other["run_id"])["status"] == "interrupted"


@flow
def a_delayed_run_waits_pending_until_its_time():
    tid = new_thread()
    thread = client.threads.get(tid)
    start = time.monotonic()
    run = client.runs.create(tid, "chain", input={"log": []}, after_seconds=2)
    assert run["status"] == "pending", run
    # LangGraph dates a delayed run at its start.
    assert (at(run["created_at"]) - at(thread["created_at"])).total_seconds() >= 1.5, (run, thread)
    assert client.threads.get(tid)["status"] == "busy"
    time.sleep(0.8)
    assert client.runs.get(tid, run["run_id"])["status"] == "pending"
    assert client.runs.join(tid, run["run_id"])["log"] == ["a", "b"]
    assert time.monotonic() - start >= 2.0


@flow
def a_delayed_run_does_not_hold_up_a_later_run():
    tid = new_thread()
    delayed = client.runs.create(tid, "chain", input={"log": ["late"]}, after_seconds=4)
    quick = client.runs.create(tid, "chain", input={"log": ["now"]}, multitask_strategy="enqueue")
    assert client.runs.join(tid, quick["run_id"])["log"] == ["now", "a", "b"]
    assert client.runs.get(tid, delayed["run_id"])["status"] == "pending"
    out = client.runs.join(tid, delayed["run_id"])
    assert out["log"] == ["now", "a", "b", "late", "a", "b"], out


@flow
def interrupt_before_and_after_stop_the_run_there():
    tid = new_thread()
    out = client.runs.wait(tid, "chain", input={"log": []}, interrupt_before=["b"])
    assert out["log"] == ["a"], out
    assert client.threads.get(tid)["status"] == "interrupted"
    assert client.threads.get_state(tid)["next"] == ["b"]
    assert client.runs.wait(tid, "chain", input=None)["log"] == ["a", "b"]

    tid = new_thread()
    out = client.runs.wait(tid, "chain", input={"log": []}, interrupt_after=["a"])
    assert out["log"] == ["a"], out
    assert client.threads.get_state(tid)["next"] == ["b"]

    tid = new_thread()
    out = client.runs.wait(tid, "chain", input={"log": []}, interrupt_before="*")
    assert out["log"] == [], out
    assert client.threads.get_state(tid)["next"] == ["a"]


@flow
def durability_exit_writes_fewer_checkpoints():
    synced, exited, flag = new_thread(), new_thread(), new_thread()
    assert client.runs.wait(synced, "chain", input={"log": []}, durability="sync")["log"] == ["a", "b"]
    assert client.runs.wait(exited, "chain", input={"log": []}, durability="exit")["log"] == ["a", "b"]
    assert client.runs.wait(flag, "chain", input={"log": []}, checkpoint_during=False)["log"] == ["a", "b"]
    full = len(client.threads.get_history(synced, limit=20))
    assert len(client.threads.get_history(exited, limit=20)) < full
    assert len(client.threads.get_history(flag, limit=20)) < full
    assert client.threads.get_state(exited)["values"]["log"] == ["a", "b"]
    bad = new_thread()
    assert status_of(lambda: client.runs.wait(bad, "chain", input={"log": []}, durability="eventually")) == 422


@flow
def run_options_are_taken_or_refused():
    plain = [p.event for p in client.runs.stream(None, "chain", input={"log": []}, stream_mode="updates")]
    both = client.runs.stream(
        None, "chain", input={"log": []}, stream_mode="updates", stream_subgraphs=True, stream_resumable=True
    )
    assert [p.event for p in both] == plain, plain
    assert status_of(lambda: client.runs.wait(None, "chain", input={"log": []}, on_completion="never")) == 422


@flow
def prune_deletes_threads():
    ran, idle = new_thread(), new_thread()
    client.runs.wait(ran, "chain", input={"log": []})
    assert client.threads.prune([ran, idle]) == {"pruned_count": 2}
    assert status_of(lambda: client.threads.get(ran)) == 404
    assert status_of(lambda: client.threads.get(idle)) == 404
    assert client.threads.prune([str(uuid.uuid4())]) == {"pruned_count": 0}
    assert client.threads.prune([]) == {"pruned_count": 0}
    assert status_of(lambda: client.threads.prune(["not-a-uuid"])) == 422
    assert status_of(lambda: client.threads.prune([ran], strategy="all")) == 422


@flow
def prune_keep_latest_keeps_the_thread_and_its_state():
    tid = new_thread()
    client.runs.wait(tid, "chain", input={"log": []})
    client.runs.wait(tid, "chain", input={"log": []})
    assert len(client.threads.get_history(tid, limit=20)) > 1
    if IS_LANGGRAPH:
        # LangGraph's in-memory runtime refuses this strategy.
        assert status_of(lambda: client.threads.prune([tid], strategy="keep_latest")) == 422
        return
    assert client.threads.prune([tid], strategy="keep_latest") == {"pruned_count": 1}
    assert len(client.threads.get_history(tid, limit=20)) == 1
    assert client.threads.get_state(tid)["values"]["log"] == ["a", "b", "a", "b"]
    assert client.threads.get(tid)["thread_id"] == tid


@flow
def join_stream_of_a_thread_across_its_runs():
    tid = new_thread()
    ids = []
    for _ in range(2):
        run = client.runs.create(
            tid, "chain", input={"log": []}, stream_mode=["values", "updates"], stream_resumable=True
        )
        client.runs.join(tid, run["run_id"])
        ids.append(run["run_id"])
    # `-`: every event kept, each run's followed by its end.
    reader, parts, _ = read_thread_stream(tid, 2, last_event_id="-")
    reader.join(20)
    assert not reader.is_alive(), parts
    done = [p.data["run_id"] for p in parts if p.event == "metadata" and p.data.get("status") == "run_done"]
    assert done == ids, parts
    starts = [p.data["run_id"] for p in parts if p.event == "metadata" and "attempt" in p.data]
    assert starts == ids, parts
    updates = [p.data for p in parts if p.event == "updates"]
    assert updates == [{"a": {"log": ["a"]}}, {"b": {"log": ["b"]}}] * 2, updates
    # After the first run's end: the second run's events only.
    first_done = next(p for p in parts if p.event == "metadata" and p.data.get("run_id") == ids[0]
                      and p.data.get("status") == "run_done")
    reader, rest, _ = read_thread_stream(tid, 1, last_event_id=first_done.id)
    reader.join(20)
    assert not reader.is_alive(), rest
    assert {p.data["run_id"] for p in rest if p.event == "metadata"} == {ids[1]}, rest
    # `lifecycle`: each run's start and end only.
    reader, life, _ = read_thread_stream(tid, 2, last_event_id="-", params={"stream_modes": "lifecycle"})
    reader.join(20)
    assert not reader.is_alive(), life
    assert [p.event for p in life] == ["metadata"] * 4, life
    assert status_of(lambda: list(client.threads.join_stream(tid, params={"stream_modes": "everything"}))) == 422
    if not IS_LANGGRAPH:
        # LangGraph's server, without authentication, streams a thread that does not exist
        # (forever, with nothing in it).
        assert status_of(lambda: list(client.threads.join_stream(str(uuid.uuid4())))) == 404


@flow
def join_stream_carries_runs_and_state_updates_as_they_happen():
    tid = new_thread()
    client.runs.wait(tid, "chain", input={"log": []})
    reader, parts, started = read_thread_stream(tid, 1, params={"stream_modes": "run_modes,state_update"})
    started.wait(10)
    time.sleep(1.0)
    client.threads.update_state(tid, {"log": ["u"]}, as_node="b")
    run = client.runs.create(tid, "sleepy", input={"log": []}, stream_mode="values")
    reader.join(20)
    assert not reader.is_alive(), parts
    [update] = [p for p in parts if p.event == "state_update"]
    assert update.data["thread_id"] == tid, update
    assert update.data["state"]["values"]["log"] == ["a", "b", "u"], update
    values = [p.data["log"] for p in parts if p.event == "values"]
    assert values and values[-1] == ["a", "b", "u", "slow"], parts
    assert parts[-1].data == {"status": "run_done", "run_id": run["run_id"]}, parts


finish()
