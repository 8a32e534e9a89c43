"""The cron flows of the official `langgraph-sdk` client (`client.crons`), run against a LangGraph
API server: create (stateless and on a thread), search, count, update, delete, the refusals of
bad requests, and ticks that run the graph.

    python cron_flows.py http://127.0.0.1:PORT

The server must serve the graphs of graphs.py and look for due crons at least every second
(`langgraph dev` with CRON_SCHEDULER_SLEEP_TIME=1, mnemograph-server with a short
`with_cron_poll_interval`). The exit status is the number of failures.
"""

import datetime
import sys
import zoneinfo
import time
import uuid

from langgraph_sdk import get_sync_client

from flows import finish, flow, status_of

client = get_sync_client(url=sys.argv[1], timeout=30)
TAG = uuid.uuid4().hex
CHAIN = "608f7b9c-04e5-5cf2-a3f7-ba75a3719808"
FIELDS = {
    "cron_id", "assistant_id", "thread_id", "user_id", "payload", "schedule", "timezone", "next_run_date",
    "end_time", "metadata", "on_run_completed", "enabled", "created_at", "updated_at",
}
# Once a year: a cron that does not fire while the flows run.
YEARLY = "0 0 1 1 *"
# Every second: croniter's sixth field is seconds, written last.
EVERY_SECOND = "* * * * * *"
MISSING = "00000000-0000-0000-0000-000000000000"


def when(text):
    return datetime.datetime.fromisoformat(text)


def is_dst(at):
    return bool(at.astimezone(zoneinfo.ZoneInfo("America/New_York")).dst())


def eventually(check, what, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"{what} did not happen within {timeout} s")


@flow
def crons_create_search_count_update_delete():
    tid = client.threads.create()["thread_id"]
    stateless = client.crons.create("chain", schedule=YEARLY, input={"log": []}, metadata={"flow": TAG})
    assert set(stateless) == FIELDS, sorted(stateless)
    assert stateless["assistant_id"] == CHAIN and stateless["thread_id"] is None, stateless
    assert (stateless["on_run_completed"], stateless["enabled"]) == ("delete", True), stateless
    assert stateless["schedule"] == YEARLY and stateless["metadata"] == {"flow": TAG}, stateless
    payload = stateless["payload"]
    assert payload["input"] == {"log": []} and payload["assistant_id"] == CHAIN, payload
    assert payload["config"]["configurable"]["cron_id"] == stateless["cron_id"], payload
    next_run = when(stateless["next_run_date"])
    assert (next_run.month, next_run.day, next_run.hour, next_run.minute) == (1, 1, 0, 0), next_run
    assert next_run.utcoffset() == datetime.timedelta(0), stateless["next_run_date"]

    on_thread = client.crons.create_for_thread(
        tid, "chain", schedule=YEARLY, input={"log": []}, metadata={"flow": TAG}, multitask_strategy="enqueue"
    )
    assert set(on_thread) == FIELDS, sorted(on_thread)
    assert on_thread["thread_id"] == tid and on_thread["on_run_completed"] is None, on_thread
    assert on_thread["payload"]["multitask_strategy"] == "enqueue", on_thread

    cid, tcid = stateless["cron_id"], on_thread["cron_id"]
    found = client.crons.search(metadata={"flow": TAG})
    assert [c["cron_id"] for c in found] == [tcid, cid], found
    assert [c["cron_id"] for c in client.crons.search(thread_id=tid)] == [tcid]
    oldest = client.crons.search(metadata={"flow": TAG}, sort_by="created_at", sort_order="asc", limit=1)
    assert [c["cron_id"] for c in oldest] == [cid], oldest
    picked = client.crons.search(metadata={"flow": TAG}, select=["cron_id", "schedule"])
    assert all(set(c) == {"cron_id", "schedule"} for c in picked), picked
    assert client.crons.count(metadata={"flow": TAG}) == 2
    assert client.crons.count(thread_id=tid) == 1
    assert client.crons.count(assistant_id=CHAIN, metadata={"flow": TAG}) == 2

    end = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=30)
    updated = client.crons.update(
        cid, schedule="30 12 * * *", metadata={"step": 2}, enabled=False, end_time=end, input={"log": ["u"]}
    )
    assert (updated["schedule"], updated["enabled"]) == ("30 12 * * *", False), updated
    assert updated["metadata"] == {"flow": TAG, "step": 2}, updated
    assert (when(updated["next_run_date"]).hour, when(updated["next_run_date"]).minute) == (12, 30), updated
    assert when(updated["end_time"]) == end, updated
    assert updated["payload"]["input"] == {"log": ["u"]}, updated
    assert updated["payload"]["config"]["configurable"]["cron_id"] == cid, updated
    assert [c["cron_id"] for c in client.crons.search(enabled=False, metadata={"flow": TAG})] == [cid]
    assert client.crons.update(cid, end_time=None)["end_time"] is None

    # A schedule read in an IANA zone; the next run date stays UTC.
    zoned = client.crons.update(cid, schedule="0 9 * * *", timezone="America/New_York")
    assert zoned["timezone"] == "America/New_York", zoned
    nine = when(zoned["next_run_date"])
    assert (nine.utcoffset(), nine.hour, nine.minute) == (datetime.timedelta(0), 13 if is_dst(nine) else 14, 0), zoned

    client.crons.delete(cid)
    assert [c["cron_id"] for c in client.crons.search(metadata={"flow": TAG})] == [tcid]
    assert status_of(lambda: client.crons.delete(cid)) == 404
    assert status_of(lambda: client.crons.update(cid, schedule=YEARLY)) == 404
    # Deleting the thread takes its crons with it.
    client.threads.delete(tid)
    assert client.crons.count(metadata={"flow": TAG}) == 0


@flow
def bad_cron_requests_are_refused_and_nothing_is_stored():
    tid = client.threads.create()["thread_id"]
    marked = {"flow": TAG, "bad": True}
    assert status_of(lambda: client.crons.create("chain", schedule="every day", metadata=marked)) == 422
    assert status_of(lambda: client.crons.create("chain", schedule="61 * * * *", metadata=marked)) == 422
    assert status_of(lambda: client.crons.create(MISSING, schedule=YEARLY, metadata=marked)) == 404
    assert status_of(lambda: client.crons.create_for_thread(MISSING, "chain", schedule=YEARLY, metadata=marked)) == 404
    assert status_of(lambda: client.crons.create("chain", schedule=YEARLY, timezone="Mars/Olympus")) == 422
    assert status_of(lambda: client.crons.update(MISSING, schedule=YEARLY)) == 404
    assert status_of(lambda: client.crons.delete(MISSING)) == 404
    assert status_of(lambda: client.crons.search(sort_by="schedule")) == 422
    cron = client.crons.create_for_thread(tid, "chain", schedule=YEARLY, metadata={"flow": TAG})
    assert status_of(lambda: client.crons.update(cron["cron_id"], schedule="not a schedule")) == 422
    assert client.crons.search(thread_id=tid)[0]["schedule"] == YEARLY, "a refused update changes nothing"
    assert client.crons.count(metadata=marked) == 0
    client.crons.delete(cron["cron_id"])


@flow
def a_thread_cron_runs_the_graph_on_its_thread_each_tick():
    tid = client.threads.create()["thread_id"]
    cron = client.crons.create_for_thread(tid, "chain", schedule=EVERY_SECOND, input={"log": ["tick"]})
    try:
        runs = eventually(
            lambda: [r for r in client.runs.list(tid) if r["status"] == "success"] or None, "a tick's run"
        )
    finally:
        client.crons.delete(cron["cron_id"])
    assert runs[0]["assistant_id"] == CHAIN, runs
    log = client.threads.get_state(tid)["values"]["log"]
    assert log[:3] == ["tick", "a", "b"], log


@flow
def a_stateless_cron_that_keeps_its_threads_leaves_one_per_tick():
    assistant = client.assistants.create("chain", metadata={"flow": TAG})
    aid = assistant["assistant_id"]
    cron = client.crons.create(
        aid, schedule=EVERY_SECOND, input={"log": ["kept"]}, on_run_completed="keep", metadata={"flow": TAG}
    )
    assert cron["on_run_completed"] == "keep", cron

    def kept_threads():
        found = client.threads.search(metadata={"assistant_id": aid}, limit=100)
        done = [t for t in found if t["status"] == "idle" and (t["values"] or {}).get("log") == ["kept", "a", "b"]]
        return done if len(done) >= 2 else None

    try:
        threads = eventually(kept_threads, "two ticks that keep their threads")
    finally:
        client.crons.delete(cron["cron_id"])
    assert len({t["thread_id"] for t in threads}) == len(threads), threads
    # Deleting the assistant takes its crons with it.
    again = client.crons.create(aid, schedule=YEARLY, metadata={"flow": TAG})
    client.assistants.delete(aid)
    assert status_of(lambda: client.crons.update(again["cron_id"], enabled=False)) == 404


finish()
