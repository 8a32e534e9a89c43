// The core flows of the official JavaScript client (`@langchain/langgraph-sdk`), run against a
// LangGraph API server.
//
//     node sdk_flows.mjs http://127.0.0.1:PORT
//
// The server must serve the graphs of ../python/graphs.py under their ids, look for due crons
// every second, and post webhooks to loopback. Every flow runs, each prints `ok` or what went wrong; the exit status is the number of
// failures. The JavaScript client parses responses and server-sent events with its own code, so
// this catches wire-format differences the Python client tolerates.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import http from "node:http";

import { Client } from "@langchain/langgraph-sdk";

const client = new Client({ apiUrl: process.argv[2], timeoutMs: 30_000 });
const failures = [];
// Tags this run's store items, so the script can run again on the same server.
const RUN_TAG = randomUUID().replaceAll("-", "");

async function flow(name, fn) {
  try {
    await fn();
    console.log(`ok    ${name}`);
  } catch (e) {
    failures.push(name);
    console.log(`FAIL  ${name}\n${e?.stack ?? e}`);
  }
}

async function newThread(payload) {
  return (await client.threads.create(payload)).thread_id;
}

/** Every part of a stream, in order. */
async function collect(stream) {
  const parts = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

await flow("assistants_search", async () => {
  const found = Object.fromEntries(
    (await client.assistants.search({ limit: 100 })).map((a) => [a.graph_id, a]),
  );
  for (const graph of ["chain", "approve", "sleepy"]) assert.ok(found[graph], Object.keys(found));
  const chain = await client.assistants.get(found.chain.assistant_id);
  assert.equal(chain.graph_id, "chain");
  // The system assistant's id is the graph id's UUIDv5, whichever server derives it.
  assert.equal(chain.assistant_id, "608f7b9c-04e5-5cf2-a3f7-ba75a3719808");
});

await flow("create_a_thread", async () => {
  const thread = await client.threads.create({ metadata: { user: "u1", flow: RUN_TAG } });
  assert.match(thread.thread_id, /^[0-9a-f-]{36}$/);
  const got = await client.threads.get(thread.thread_id);
  assert.equal(got.status, "idle");
  assert.equal(got.metadata.user, "u1");
});

await flow("stream_values_and_updates", async () => {
  const tid = await newThread();
  const parts = await collect(
    client.runs.stream(tid, "chain", { input: { log: ["x"] }, streamMode: ["values", "updates"] }),
  );
  const events = parts.map((p) => p.event);
  assert.equal(events[0], "metadata", JSON.stringify(events));
  assert.ok(parts[0].data.run_id, JSON.stringify(parts[0]));
  const updates = parts.filter((p) => p.event === "updates").map((p) => p.data);
  assert.deepEqual(updates, [{ a: { log: ["a"] } }, { b: { log: ["b"] } }]);
  const values = parts.filter((p) => p.event === "values").map((p) => p.data.log);
  assert.deepEqual(values, [["x"], ["x", "a"], ["x", "a", "b"]]);
  const thread = await client.threads.get(tid);
  assert.equal(thread.status, "idle");
  assert.deepEqual(thread.values.log, ["x", "a", "b"]);
});

await flow("wait_for_a_run", async () => {
  const tid = await newThread();
  const out = await client.runs.wait(tid, "chain", { input: { log: ["w"] } });
  assert.deepEqual(out.log, ["w", "a", "b"]);
  const stateless = await client.runs.wait(null, "chain", { input: { log: [] } });
  assert.deepEqual(stateless.log, ["a", "b"]);
});

await flow("interrupt_then_resume_with_command", async () => {
  const tid = await newThread();
  const out = await client.runs.wait(tid, "approve", { input: { log: [] } });
  assert.deepEqual(out.log, ["a"]);
  assert.equal(out.__interrupt__.length, 1, JSON.stringify(out));
  const [pending] = out.__interrupt__;
  assert.deepEqual(pending.value, { question: "approve?" });
  assert.equal((await client.threads.get(tid)).status, "interrupted");
  const state = await client.threads.getState(tid);
  assert.deepEqual(state.next, ["ask"]);
  assert.equal(state.interrupts[0].id, pending.id);
  const resumed = await client.runs.wait(tid, "approve", { command: { resume: "yes" } });
  assert.deepEqual(resumed.log, ["a", "ask:yes", "b"]);
  assert.equal((await client.threads.get(tid)).status, "idle");
});

await flow("stream_stops_at_interrupt", async () => {
  const tid = await newThread();
  const parts = await collect(
    client.runs.stream(tid, "approve", { input: { log: [] }, streamMode: "updates" }),
  );
  const last = parts.at(-1);
  assert.equal(last.event, "updates", JSON.stringify(parts));
  assert.ok(last.data.__interrupt__, JSON.stringify(last));
  const resumed = await collect(
    client.runs.stream(tid, "approve", { command: { resume: "yes" }, streamMode: "values" }),
  );
  assert.deepEqual(resumed.at(-1).data.log, ["a", "ask:yes", "b"]);
});

await flow("state_and_history", async () => {
  const tid = await newThread();
  await client.runs.wait(tid, "chain", { input: { log: [] } });
  const state = await client.threads.getState(tid);
  assert.deepEqual(state.values.log, ["a", "b"]);
  assert.deepEqual(state.next, []);
  const history = await client.threads.getHistory(tid, { limit: 10 });
  assert.deepEqual(
    history.map((h) => h.next),
    [[], ["b"], ["a"], ["__start__"]],
  );
  assert.deepEqual(
    history.map((h) => h.metadata.step),
    [2, 1, 0, -1],
  );
  assert.equal(
    history[1].checkpoint.checkpoint_id,
    history[0].parent_checkpoint.checkpoint_id,
  );
  const older = await client.threads.getState(tid, history[1].checkpoint.checkpoint_id);
  assert.deepEqual(older.values.log, ["a"]);
  assert.equal((await client.threads.getHistory(tid, { limit: 2 })).length, 2);
});

await flow("background_run_and_join", async () => {
  const tid = await newThread();
  const run = await client.runs.create(tid, "sleepy", { input: { log: [] } });
  assert.ok(["pending", "running"].includes(run.status), JSON.stringify(run));
  assert.equal((await client.threads.get(tid)).status, "busy");
  const out = await client.runs.join(tid, run.run_id);
  assert.deepEqual(out.log, ["slow"]);
  assert.equal((await client.runs.get(tid, run.run_id)).status, "success");
  assert.deepEqual(
    (await client.runs.list(tid)).map((r) => r.run_id),
    [run.run_id],
  );
});

await flow("join_stream_of_a_background_run", async () => {
  const tid = await newThread();
  const run = await client.runs.create(tid, "sleepy", {
    input: { log: [] },
    streamMode: ["values"],
  });
  const parts = await collect(client.runs.joinStream(tid, run.run_id));
  const values = parts.filter((p) => p.event === "values").map((p) => p.data);
  assert.ok(values.length > 0, JSON.stringify(parts));
  assert.deepEqual(values.at(-1).log, ["slow"]);
});

await flow("stream_reconnects_after_a_drop", async () => {
  // Cuts the run's first stream after its first chunk, as a dropped connection would; the
  // client then reconnects where the response's `Location` points, with `Last-Event-ID`.
  let cut = false;
  const requests = [];
  const dropping = new Client({
    apiUrl: process.argv[2],
    timeoutMs: 30_000,
    callerOptions: {
      fetch: async (url, init) => {
        requests.push(`${init?.method ?? "GET"} ${new URL(url).pathname}`);
        const response = await fetch(url, init);
        if (cut || !new URL(url).pathname.endsWith("/runs/stream")) return response;
        cut = true;
        const reader = response.body.getReader();
        let chunks = 0;
        const body = new ReadableStream({
          async pull(controller) {
            // The next chunk is lost with the connection. Erroring a stream drops what its
            // readers have not read yet, so the error waits until they read the first chunk.
            if (chunks++ > 0) {
              await reader.read();
              await new Promise((resolve) => setTimeout(resolve, 100));
              await reader.cancel();
              controller.error(new TypeError("terminated"));
              return;
            }
            const { done, value } = await reader.read();
            if (done) controller.close();
            else controller.enqueue(value);
          },
        });
        return new Response(body, { status: response.status, headers: response.headers });
      },
    },
  });
  const tid = await newThread();
  const parts = await collect(
    dropping.runs.stream(tid, "sleepy", {
      input: { log: [] },
      streamMode: "values",
      streamResumable: true,
    }),
  );
  assert.ok(cut);
  assert.ok(
    requests.some((r) => /^GET \/threads\/[^/]+\/runs\/[^/]+\/stream$/.test(r)),
    JSON.stringify(requests),
  );
  assert.deepEqual(
    parts.map((p) => p.event),
    ["metadata", "values", "values"],
    JSON.stringify({ parts, requests }),
  );
  assert.deepEqual(parts.at(-1).data.log, ["slow"]);
});

await flow("store_put_get", async () => {
  const ns = ["users", RUN_TAG];
  await client.store.putItem(ns, "food", { likes: "pizza", stars: 5 });
  const item = await client.store.getItem(ns, "food");
  assert.deepEqual(item.value, { likes: "pizza", stars: 5 });
  assert.deepEqual(item.namespace, ns);
  assert.equal(item.key, "food");
  assert.ok(item.createdAt ?? item.created_at, JSON.stringify(item));
  assert.equal(await client.store.getItem(ns, "missing"), null);
  const found = (await client.store.searchItems(["users", RUN_TAG])).items;
  assert.deepEqual(
    found.map((i) => i.key),
    ["food"],
  );
  await client.store.deleteItem(ns, "food");
  assert.equal(await client.store.getItem(ns, "food"), null);
});

/** Waits for `check` to return something truthy, up to `seconds`. */
async function eventually(check, what, seconds = 30) {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    const found = await check();
    if (found) return found;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what} did not happen within ${seconds} s`);
}

await flow("assistants_as_versioned_configurations", async () => {
  const made = await client.assistants.create({
    graphId: "configured",
    config: { configurable: { greeting: "hello" } },
    metadata: { flow: RUN_TAG, tier: "free" },
    name: `greeter-${RUN_TAG}`,
  });
  const id = made.assistant_id;
  assert.equal(made.version, 1);
  assert.deepEqual(made.context, { greeting: "hello" });
  const v2 = await client.assistants.update(id, {
    config: { configurable: { greeting: "hi" } },
    metadata: { tier: "paid" },
  });
  assert.equal(v2.version, 2);
  assert.deepEqual(v2.metadata, { flow: RUN_TAG, tier: "paid" });
  const versions = await client.assistants.getVersions(id);
  assert.deepEqual(versions.map((v) => v.version), [2, 1]);
  const ran = await client.runs.wait(null, id, { input: { log: [] } });
  assert.deepEqual(ran.log, ["greeting:hi"]);
  const back = await client.assistants.setLatest(id, 1);
  assert.equal(back.version, 1);
  assert.deepEqual((await client.runs.wait(null, id, { input: { log: [] } })).log, ["greeting:hello"]);
  const found = await client.assistants.search({ metadata: { flow: RUN_TAG }, select: ["assistant_id", "name"] });
  assert.deepEqual(found, [{ assistant_id: id, name: `greeter-${RUN_TAG}` }]);
  assert.equal(await client.assistants.count({ metadata: { flow: RUN_TAG } }), 1);
  // The run's metadata carries the assistant's.
  const tid = await newThread();
  const run = await client.runs.create(tid, id, { input: { log: [] } });
  assert.equal(run.metadata.tier, "free", JSON.stringify(run.metadata));
  await client.runs.join(tid, run.run_id);
  await client.assistants.delete(id);
  assert.equal(await client.assistants.count({ metadata: { flow: RUN_TAG } }), 0);
  await assert.rejects(client.assistants.get(id), /404/);
});

await flow("subgraphs_and_the_opened_drawing", async () => {
  const nested = (await client.assistants.search({ graphId: "nested" })).find(
    (a) => a.metadata.created_by === "system",
  );
  const subgraphs = await client.assistants.getSubgraphs(nested.assistant_id);
  assert.deepEqual(Object.keys(subgraphs), ["inner"]);
  const drawn = await client.assistants.getGraph(nested.assistant_id, { xray: true });
  assert.deepEqual(drawn.nodes.map((n) => n.id).sort(), ["__end__", "__start__", "after", "inner:a", "inner:b"]);
});

await flow("a_cron_ticks_on_its_thread_until_deleted", async () => {
  const tid = await newThread();
  // Every second (croniter's sixth field is seconds).
  const cron = await client.crons.createForThread(tid, "chain", {
    schedule: "* * * * * *",
    input: { log: [] },
    metadata: { flow: RUN_TAG },
  });
  assert.equal(cron.thread_id, tid);
  const found = await client.crons.search({ threadId: tid });
  assert.deepEqual(found.map((c) => c.cron_id), [cron.cron_id]);
  assert.equal(await client.crons.count({ threadId: tid }), 1);
  await eventually(async () => (await client.runs.list(tid)).length > 0, "a tick's run");
  await client.crons.delete(cron.cron_id);
  assert.equal(await client.crons.count({ threadId: tid }), 0);
});

await flow("a_webhook_receives_the_run_it_follows", async () => {
  const received = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      received.push(JSON.parse(body));
      res.end("ok");
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  try {
    const url = `http://127.0.0.1:${server.address().port}/hook`;
    const tid = await newThread();
    const run = await client.runs.create(tid, "chain", { input: { log: [] }, webhook: url });
    await client.runs.join(tid, run.run_id);
    const hook = await eventually(() => received.find((r) => r.run_id === run.run_id), "the webhook's post");
    assert.equal(hook.status, "success");
    assert.equal(hook.thread_id, tid);
  } finally {
    server.close();
  }
});

console.log(failures.length ? `${failures.length} failed: ${failures.join(", ")}` : "all flows passed");
process.exit(failures.length);
