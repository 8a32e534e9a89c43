"""Two users of one server, through the official `langgraph-sdk` client with bearer tokens: neither
reads, lists, counts, streams, joins, cancels, updates or deletes the other's threads, runs or
store items, on any route; what the other owns answers as what does not exist.

    python auth_flows.py http://127.0.0.1:PORT

The server must take `Authorization: Bearer token-a` as alice and `token-b` as bob, each owning
what it creates, and serve the graphs of graphs.py. The exit status is the number of failures.
"""

import sys
import time
import uuid

from langgraph_sdk import get_sync_client

from flows import finish, flow, status_of

URL = sys.argv[1]
alice = get_sync_client(url=URL, timeout=30, headers={"Authorization": "Bearer token-a"})
bob = get_sync_client(url=URL, timeout=30, headers={"Authorization": "Bearer token-b"})
nobody = get_sync_client(url=URL, timeout=30, headers={"Authorization": "Bearer not-a-token"})
TAG = uuid.uuid4().hex


def refused(call, status=404):
    got = status_of(call)
    assert got == status, f"expected {status}, got {got}"


def wait_status(client, thread_id, run_id, statuses, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = client.runs.get(thread_id, run_id)
        if run["status"] in statuses:
            return run
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} never reached {statuses}: {run['status']}")


@flow
def no_token_no_answer():
    for call in [
        lambda: nobody.threads.search(),
        lambda: nobody.threads.create(),
        lambda: nobody.assistants.search(),
        lambda: nobody.store.search_items(["alice"]),
        lambda: nobody.runs.wait(None, "chain", input={"log": []}),
    ]:
        refused(call, 401)


@flow
def the_owner_is_stamped_by_the_server():
    thread = alice.threads.create(metadata={"owner": "bob", "flow": TAG})
    assert thread["metadata"]["owner"] == "alice", thread
    patched = alice.threads.update(thread["thread_id"], metadata={"owner": "bob", "note": 1})
    assert patched["metadata"]["owner"] == "alice" and patched["metadata"]["note"] == 1, patched
    refused(lambda: bob.threads.get(thread["thread_id"]))


@flow
def another_users_thread_does_not_exist():
    tid = alice.threads.create(metadata={"flow": TAG, "who": "alice"})["thread_id"]
    alice.runs.wait(tid, "chain", input={"log": []})
    checkpoint = alice.threads.get_history(tid, limit=1)[0]["checkpoint"]["checkpoint_id"]
    calls = {
        "get": lambda: bob.threads.get(tid),
        "update": lambda: bob.threads.update(tid, metadata={"who": "bob"}),
        "delete": lambda: bob.threads.delete(tid),
        "copy": lambda: bob.threads.copy(tid),
        "get_state": lambda: bob.threads.get_state(tid),
        "get_state at": lambda: bob.threads.get_state(tid, checkpoint_id=checkpoint),
        "update_state": lambda: bob.threads.update_state(tid, {"log": ["bob"]}, as_node="b"),
        "get_history": lambda: bob.threads.get_history(tid),
        "runs.list": lambda: bob.runs.list(tid),
        "runs.create": lambda: bob.runs.create(tid, "chain", input={"log": []}),
        "runs.wait": lambda: bob.runs.wait(tid, "chain", input={"log": []}),
        "runs.stream": lambda: bob.runs.stream(tid, "chain", input={"log": []}),
    }
    for name, call in calls.items():
        got = status_of(call)
        assert got == 404, f"{name}: expected 404, got {got}"
    # As for a thread that never was.
    never = str(uuid.uuid4())
    assert status_of(lambda: bob.threads.get(never)) == 404
    assert status_of(lambda: bob.threads.get_state(never)) == 404
    # Nothing of alice's changed.
    thread = alice.threads.get(tid)
    assert thread["metadata"]["who"] == "alice" and thread["values"]["log"] == ["a", "b"], thread
    assert len(alice.threads.get_history(tid)) == 4
    assert len(alice.runs.list(tid)) == 1


@flow
def another_users_runs_do_not_exist():
    tid = alice.threads.create(metadata={"flow": TAG})["thread_id"]
    run = alice.runs.create(tid, "sleepy", input={"log": []})
    rid = run["run_id"]
    calls = {
        "get": lambda: bob.runs.get(tid, rid),
        "join": lambda: bob.runs.join(tid, rid),
        "join_stream": lambda: bob.runs.join_stream(tid, rid),
        "cancel": lambda: bob.runs.cancel(tid, rid),
        "delete": lambda: bob.runs.delete(tid, rid),
    }
    for name, call in calls.items():
        got = status_of(call)
        assert got == 404, f"{name}: expected 404, got {got}"
    # Bob's cancel did not stop it: it ends as it would have.
    events = [p.event for p in alice.runs.join_stream(tid, rid)]
    assert events and events[-1] != "error", events
    assert wait_status(alice, tid, rid, {"success", "error", "interrupted"})["status"] == "success"
    assert alice.threads.get_state(tid)["values"]["log"] == ["slow"]


@flow
def search_and_count_show_only_ones_own():
    mine = {alice.threads.create(metadata={"flow": TAG, "side": "count"})["thread_id"] for _ in range(3)}
    theirs = bob.threads.create(metadata={"flow": TAG, "side": "count"})["thread_id"]
    found = {t["thread_id"] for t in alice.threads.search(metadata={"side": "count"}, limit=100)}
    assert found == mine, found
    found = {t["thread_id"] for t in bob.threads.search(metadata={"side": "count"}, limit=100)}
    assert found == {theirs}, found
    assert alice.threads.count(metadata={"side": "count"}) == 3
    assert bob.threads.count(metadata={"side": "count"}) == 1
    # Asking for the other's threads by their owner finds nothing.
    assert bob.threads.search(metadata={"owner": "alice"}) == []
    assert bob.threads.count(metadata={"owner": "alice"}) == 0
    assert bob.threads.search(ids=list(mine)) == []


@flow
def a_taken_thread_id_is_not_handed_over():
    tid = alice.threads.create(metadata={"flow": TAG})["thread_id"]
    refused(lambda: bob.threads.create(thread_id=tid, if_exists="do_nothing"), 409)
    refused(lambda: bob.runs.create(tid, "chain", input={"log": []}, if_not_exists="create"))
    assert alice.threads.create(thread_id=tid, if_exists="do_nothing")["thread_id"] == tid


@flow
def threads_made_for_runs_belong_to_their_caller():
    tid = str(uuid.uuid4())
    bob.runs.wait(tid, "chain", input={"log": []}, if_not_exists="create")
    assert bob.threads.get(tid)["metadata"]["owner"] == "bob"
    refused(lambda: alice.threads.get(tid))
    kept = alice.runs.create(None, "chain", input={"log": []}, on_completion="keep")
    wait_status(alice, kept["thread_id"], kept["run_id"], {"success"})
    assert alice.threads.get(kept["thread_id"])["metadata"]["owner"] == "alice"
    refused(lambda: bob.runs.get(kept["thread_id"], kept["run_id"]))


@flow
def the_graph_runs_as_the_caller():
    tid = alice.threads.create()["thread_id"]
    out = alice.runs.wait(
        tid,
        "whoami",
        input={"log": []},
        config={"configurable": {"langgraph_auth_user": {"identity": "bob"}}},
        metadata={"owner": "bob"},
    )
    assert out["log"] == ["user:alice"], out
    assert bob.runs.wait(None, "whoami", input={"log": []})["log"] == ["user:bob"]


@flow
def the_store_is_each_users_own():
    alice.store.put_item(["alice", TAG], "fact", {"likes": "tea"})
    refused(lambda: alice.store.put_item(["bob", TAG], "fact", {"likes": "lies"}), 403)
    refused(lambda: bob.store.put_item(["alice", TAG], "fact", {"likes": "coffee"}), 403)
    refused(lambda: bob.store.delete_item(["alice", TAG], "fact"), 403)
    bob.store.put_item(["bob", TAG], "fact", {"likes": "coffee"})
    assert status_of(lambda: bob.store.get_item(["alice", TAG], "fact")) in (None, 404)
    assert bob.store.search_items(["alice"])["items"] == []
    everything = bob.store.search_items([], limit=100)["items"]
    assert everything and all(i["namespace"][0] == "bob" for i in everything), everything
    spaces = bob.store.list_namespaces(limit=100)["namespaces"]
    assert spaces and all(ns[0] == "bob" for ns in spaces), spaces
    assert alice.store.get_item(["alice", TAG], "fact")["value"] == {"likes": "tea"}


@flow
def assistants_are_everyones():
    for client in (alice, bob):
        graphs = {a["graph_id"] for a in client.assistants.search(limit=100)}
        assert {"chain", "whoami"} <= graphs, graphs


@flow
def an_assistant_is_changed_only_by_its_owner():
    config = {"configurable": {"greeting": "alices"}}
    mine = alice.assistants.create("configured", config=config, metadata={"owner": "bob", "flow": TAG})
    aid = mine["assistant_id"]
    assert mine["metadata"]["owner"] == "alice", mine
    # Every caller reads and runs it, as every caller reads the graphs' assistants.
    assert bob.assistants.get(aid)["assistant_id"] == aid
    assert bob.runs.wait(None, aid, input={"log": []})["log"] == ["greeting:alices"]
    # Only its owner changes it; to another caller it does not exist.
    refused(lambda: bob.assistants.update(aid, name="taken"))
    refused(lambda: bob.assistants.set_latest(aid, 1))
    refused(lambda: bob.assistants.delete(aid))
    refused(lambda: bob.assistants.create("configured", assistant_id=aid, if_exists="do_nothing"), 409)
    updated = alice.assistants.update(aid, metadata={"owner": "bob"})
    assert updated["version"] == 2 and updated["metadata"]["owner"] == "alice", updated
    # The graphs' own assistants are no caller's to change or delete.
    system = alice.assistants.search(graph_id="chain", metadata={"created_by": "system"})[0]
    refused(lambda: alice.assistants.update(system["assistant_id"], name="mine"))
    refused(lambda: alice.assistants.delete(system["assistant_id"]))
    assert alice.assistants.get(system["assistant_id"])["version"] == system["version"]
    alice.assistants.delete(aid)
    refused(lambda: alice.assistants.get(aid))


@flow
def a_cron_is_its_makers_and_runs_as_its_maker():
    tid = alice.threads.create(metadata={"flow": TAG})["thread_id"]
    yearly = alice.crons.create("chain", schedule="0 0 1 1 *", metadata={"owner": "bob", "flow": TAG})
    cid = yearly["cron_id"]
    assert yearly["metadata"]["owner"] == "alice" and yearly["user_id"] == "alice", yearly
    # To another caller it does not exist: not found, not listed, not counted.
    refused(lambda: bob.crons.update(cid, enabled=False))
    refused(lambda: bob.crons.delete(cid))
    assert bob.crons.search(metadata={"flow": TAG}) == []
    assert bob.crons.count(metadata={"flow": TAG}) == 0
    assert [c["cron_id"] for c in alice.crons.search(metadata={"flow": TAG})] == [cid]
    assert alice.crons.count(metadata={"flow": TAG}) == 1
    # Nor may it schedule runs on a thread it cannot see.
    refused(lambda: bob.crons.create_for_thread(tid, "chain", schedule="0 0 1 1 *"))
    assert alice.crons.update(cid, metadata={"owner": "bob"})["metadata"]["owner"] == "alice"
    alice.crons.delete(cid)
    # Each tick runs as the cron's maker, whoever asks for the thread's state.
    ticking = alice.crons.create_for_thread(tid, "whoami", schedule="* * * * * *", input={"log": []})
    deadline = time.monotonic() + 30
    try:
        while not alice.runs.list(tid) and time.monotonic() < deadline:
            time.sleep(0.1)
        runs = alice.runs.list(tid)
        assert runs, "no tick ran"
        wait_status(alice, tid, runs[-1]["run_id"], {"success"})
    finally:
        alice.crons.delete(ticking["cron_id"])
    assert alice.threads.get_state(tid)["values"]["log"][0] == "user:alice"


@flow
def bulk_operations_touch_only_ones_own():
    tid = alice.threads.create(metadata={"flow": TAG})["thread_id"]
    alice.runs.wait(tid, "chain", input={"log": []})
    delayed = alice.runs.create(tid, "chain", input={"log": []}, after_seconds=30, multitask_strategy="enqueue")
    rid = delayed["run_id"]
    # Bob cancels, prunes and streams nothing of alice's: as if none of it existed.
    refused(lambda: bob.runs.cancel_many(thread_id=tid, run_ids=[rid]))
    refused(lambda: bob.runs.cancel_many(status="pending"))
    refused(lambda: bob.threads.prune([tid]))
    refused(lambda: bob.threads.prune([tid], strategy="keep_latest"))
    refused(lambda: bob.threads.join_stream(tid, last_event_id="-"))
    assert alice.runs.get(tid, rid)["status"] == "pending"
    assert alice.threads.get(tid)["values"]["log"] == ["a", "b"]
    assert len(alice.threads.get_history(tid)) == 4
    # A prune naming alice's thread beside his own touches neither.
    mine = bob.threads.create(metadata={"flow": TAG})["thread_id"]
    refused(lambda: bob.threads.prune([mine, tid]))
    assert bob.threads.get(mine)["thread_id"] == mine
    # His own bulk calls reach his own only; alice's reach hers.
    assert bob.threads.prune([mine]) == {"pruned_count": 1}
    alice.runs.cancel_many(status="pending")
    assert alice.runs.get(tid, rid)["status"] == "interrupted"
    runs = bob.runs.create_batch([{"assistant_id": "whoami", "input": {"log": []}, "on_completion": "keep"}])
    assert bob.runs.join(runs[0]["thread_id"], runs[0]["run_id"])["log"] == ["user:bob"]
    refused(lambda: alice.threads.get(runs[0]["thread_id"]))


finish()
