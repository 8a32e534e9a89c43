// Calls every public method of the official JavaScript client (`@langchain/langgraph-sdk`) once,
// with ordinary arguments, against a LangGraph API server, and writes what each answered as JSON.
//
//     node probe.mjs http://127.0.0.1:PORT REPORT.json
//
// The methods are found by walking the sub-clients' prototypes, so a method a later SDK pin adds
// fails the probe until it has a call recipe here. The report holds, per method, whether the
// call succeeded and the shape of what it returned: keys and JSON types, recursively, an array
// by its first element, a stream by the first part of each event; values such as ids and
// timestamps are left out, so the reports of two servers compare; a failure is reported with its
// HTTP status. The server must serve the graphs of ../python/graphs.py under their ids. The exit
// status is the number of methods that failed.

import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";

import { Client } from "@langchain/langgraph-sdk";

const [url, reportPath] = process.argv.slice(2);
const client = new Client({ apiUrl: url, timeoutMs: 30_000 });
// Tags what this probe makes, so its searches find only its own and it can run again.
const TAG = `probe-${randomUUID().replaceAll("-", "").slice(0, 12)}`;
const META = { probe: TAG };
// The sub-clients the probe covers. The client's other own properties are internal: their names
// start with `~`; any other one fails the probe.
const SUB_CLIENTS = ["assistants", "threads", "runs", "crons", "store"];
// The request plumbing every sub-client inherits from the SDK's base client (protected in its
// types), not API methods; any other inherited method fails the probe.
const PLUMBING = new Set(["prepareFetchOptions", "fetch", "streamWithRetry"]);
// `threads.stream` opens a session of the experimental thread-centric streaming protocol, a
// separate protocol from the run streams every other method speaks; it is left out.
const SKIPPED = new Set(["threads.stream"]);
// How long a method may take, in ms: every call answers within a few seconds on either server.
const TIMEOUT = 20_000;
// A cron schedule that never fires while the probe runs: midnight on the first of January.
const YEARLY = "0 0 1 1 *";

/** The JSON shape of `value`: objects by their keys, arrays by their first element, scalars by
 * their JSON type. */
function shape(value) {
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) return value.length ? [shape(value[0])] : [];
  if (typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shape(v)]));
  }
  if (["string", "number", "boolean"].includes(typeof value)) return typeof value;
  throw new TypeError(`not JSON: ${typeof value}`);
}

/** A stream as an object from each event's name to the shape of its first part's data, read to
 * its end or, when `untilRunDone`, to its first `run_done` (a thread's stream stays open after). */
async function streamShape(stream, untilRunDone = false) {
  const events = {};
  for await (const part of stream) {
    if (!(part.event in events)) events[part.event] = shape(part.data);
    if (untilRunDone && part.event === "metadata" && part.data?.status === "run_done") break;
  }
  return { stream: events };
}

/** What `call` resolves to; a call that has not settled after `TIMEOUT` rejects, so a method
 * that hangs fails the probe rather than stall it. */
function within(call) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${TIMEOUT} ms`)), TIMEOUT);
  });
  return Promise.race([call(), late]).finally(() => clearTimeout(timer));
}

const recipes = new Map();
const state = {};

/** Registers the call of method `name`; recipes run in the order they are written. */
function recipe(name, call) {
  recipes.set(name, call);
}

recipe("assistants.create", async () => {
  const created = await client.assistants.create({
    graphId: "configured",
    config: { configurable: { greeting: "hi" } },
    metadata: META,
    name: TAG,
    description: "probe",
  });
  state.assistant = created.assistant_id;
  return created;
});
recipe("assistants.get", () => client.assistants.get(state.assistant));
recipe("assistants.update", () =>
  client.assistants.update(state.assistant, { config: { configurable: { greeting: "hello" } } }),
);
recipe("assistants.getVersions", () => client.assistants.getVersions(state.assistant));
recipe("assistants.setLatest", () => client.assistants.setLatest(state.assistant, 1));
recipe("assistants.search", () => client.assistants.search({ metadata: META }));
recipe("assistants.count", () => client.assistants.count({ metadata: META }));
recipe("assistants.getGraph", () => client.assistants.getGraph(state.assistant));
recipe("assistants.getSchemas", () => client.assistants.getSchemas(state.assistant));
recipe("assistants.getSubgraphs", () => client.assistants.getSubgraphs(state.assistant));

recipe("threads.create", async () => {
  const created = await client.threads.create({ metadata: META });
  state.thread = created.thread_id;
  return created;
});
recipe("threads.update", () => client.threads.update(state.thread, { metadata: { step: "updated" } }));

recipe("runs.create", async () => {
  const run = await client.runs.create(state.thread, "chain", {
    input: { log: [] },
    metadata: META,
    streamMode: ["values", "updates"],
    streamResumable: true,
  });
  state.run = run.run_id;
  return run;
});
recipe("runs.join", () => client.runs.join(state.thread, state.run));
recipe("runs.get", () => client.runs.get(state.thread, state.run));
recipe("runs.list", () => client.runs.list(state.thread));
recipe("runs.joinStream", () =>
  streamShape(client.runs.joinStream(state.thread, state.run, { lastEventId: "-" })),
);
recipe("runs.wait", () => client.runs.wait(state.thread, "chain", { input: { log: [] } }));
recipe("runs.stream", () => {
  const payload = { input: { log: [] }, streamMode: ["values", "updates"] };
  return streamShape(client.runs.stream(state.thread, "chain", payload));
});

recipe("threads.get", () => client.threads.get(state.thread));
recipe("threads.search", () => client.threads.search({ metadata: META }));
recipe("threads.count", () => client.threads.count({ metadata: META }));
recipe("threads.getState", () => client.threads.getState(state.thread));
recipe("threads.updateState", () =>
  client.threads.updateState(state.thread, { values: { log: ["probe"] }, asNode: "b" }),
);
recipe("threads.patchState", () => client.threads.patchState(state.thread, { reviewed: true }));
recipe("threads.getHistory", () => client.threads.getHistory(state.thread, { limit: 3 }));
recipe("threads.joinStream", () =>
  streamShape(client.threads.joinStream(state.thread, { lastEventId: "-" }), true),
);
recipe("threads.copy", async () => {
  const copied = await client.threads.copy(state.thread);
  state.copy = copied.thread_id;
  return copied;
});

recipe("runs.createBatch", () => {
  const payload = { assistantId: "chain", input: { log: [] }, metadata: META };
  return client.runs.createBatch([payload, payload]);
});
recipe("runs.cancel", async () => {
  const delayed = await client.runs.create(state.thread, "chain", { input: { log: [] }, afterSeconds: 60 });
  return client.runs.cancel(state.thread, delayed.run_id);
});
recipe("runs.cancelMany", async () => {
  const delayed = await client.runs.create(state.thread, "chain", { input: { log: [] }, afterSeconds: 60 });
  return client.runs.cancelMany({ threadId: state.thread, runIds: [delayed.run_id] });
});
recipe("runs.delete", () => client.runs.delete(state.thread, state.run));

recipe("crons.create", async () => {
  const cron = await client.crons.create("chain", { schedule: YEARLY, input: { log: [] }, metadata: META });
  state.cron = cron.cron_id;
  return cron;
});
recipe("crons.createForThread", async () => {
  const payload = { schedule: YEARLY, input: { log: [] }, metadata: META };
  const cron = await client.crons.createForThread(state.thread, "chain", payload);
  state.threadCron = cron.cron_id;
  return cron;
});
recipe("crons.update", () => client.crons.update(state.cron, { schedule: "0 0 2 1 *" }));
// The thread's cron only: which of the probe's two crons comes first is the server's choice.
recipe("crons.search", () => client.crons.search({ metadata: META, threadId: state.thread }));
recipe("crons.count", () => client.crons.count({ metadata: META }));
recipe("crons.delete", async () => {
  await client.crons.delete(state.threadCron);
  return client.crons.delete(state.cron);
});

recipe("store.putItem", () => client.store.putItem([TAG, "notes"], "probe", { text: "hello" }));
recipe("store.getItem", () => client.store.getItem([TAG, "notes"], "probe"));
recipe("store.searchItems", () => client.store.searchItems([TAG]));
recipe("store.listNamespaces", () => client.store.listNamespaces({ prefix: [TAG] }));
recipe("store.deleteItem", () => client.store.deleteItem([TAG, "notes"], "probe"));

recipe("threads.prune", () => client.threads.prune([state.copy]));
recipe("threads.delete", () => client.threads.delete(state.thread));
recipe("assistants.delete", () => client.assistants.delete(state.assistant));

/** Every public method of the sub-clients, as `sub.method`; throws on a sub-client or an
 * inherited method the probe does not know. */
function methods() {
  const unknown = Object.keys(client).filter((k) => !k.startsWith("~") && !SUB_CLIENTS.includes(k));
  if (unknown.length) throw new Error(`the client has properties the probe does not cover: ${unknown}`);
  const found = new Set();
  for (const sub of SUB_CLIENTS) {
    const own = Object.getPrototypeOf(client[sub]);
    for (const name of Object.getOwnPropertyNames(own)) {
      if (name !== "constructor" && typeof own[name] === "function") found.add(`${sub}.${name}`);
    }
    for (let p = Object.getPrototypeOf(own); p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
      const inherited = Object.getOwnPropertyNames(p).filter(
        (n) => n !== "constructor" && typeof p[n] === "function" && !PLUMBING.has(n),
      );
      if (inherited.length) {
        throw new Error(`${sub} inherits methods the probe does not cover: ${inherited}`);
      }
    }
  }
  return found;
}

const found = methods();
const missing = [...found].filter((m) => !SKIPPED.has(m) && !recipes.has(m));
if (missing.length) throw new Error(`methods with no call recipe: ${missing}`);
const stale = [...recipes.keys()].filter((m) => !found.has(m));
if (stale.length) throw new Error(`recipes for methods the client does not have: ${stale}`);

const report = { skipped: [...SKIPPED].sort(), methods: {} };
let failed = 0;
for (const [name, call] of recipes) {
  try {
    report.methods[name] = { ok: true, shape: shape(await within(call)) };
    console.log(`ok    ${name}`);
  } catch (e) {
    failed += 1;
    report.methods[name] = { ok: false, error: String(e), ...(e?.status ? { status: e.status } : {}) };
    console.log(`FAIL  ${name}\n${e?.stack ?? e}`);
  }
}
writeFileSync(reportPath, JSON.stringify(report, null, 1));
console.log(`${recipes.size} methods called, ${failed} failed`);
process.exit(failed);
