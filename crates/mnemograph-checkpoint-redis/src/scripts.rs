//! The Lua scripts behind every call that touches more than one key.
//!
//! A script runs atomically and in one round trip (`EVALSHA`, loaded on first `NOSCRIPT` by
//! [`redis::Script`]), which is how `put` writes blobs, record and index entry together: a crash
//! can lose the whole call but never leave an index entry that points at nothing. Every script
//! gets the seven keys of one thread (see [`ThreadKeys`](crate::ThreadKeys)) in the same order,
//! all in one cluster slot, and declares them in `KEYS` as Redis Cluster requires.
//!
//! Expiry: each writing script ends by giving *every* key of the thread one absolute deadline
//! (`PEXPIREAT` with a time read once from `TIME`), so the keys of a thread always expire in the
//! same millisecond; and inside a script Redis checks expiry against the script's start time, so
//! a read sees a thread either whole or not at all.

use std::sync::LazyLock;

use redis::Script;

/// Shared by every script: applies the thread's expiry to all its keys.
///
/// `ttl` is in milliseconds; 0 means "never expire", as does the `pinned` flag in `meta`.
const PRELUDE: &str = r"
local function expire_all(ttl)
  if ttl == 0 or redis.call('HEXISTS', KEYS[7], 'pinned') == 1 then
    for i = 1, #KEYS do redis.call('PERSIST', KEYS[i]) end
    return
  end
  local now = redis.call('TIME')
  local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) + ttl
  local at = string.format('%d', ms)
  for i = 1, #KEYS do redis.call('PEXPIREAT', KEYS[i], at) end
end
local function hex(s)
  return (string.gsub(s, '.', function(c) return string.format('%02x', string.byte(c)) end))
end
-- HMGET in slices: `unpack` of a very long list would overflow the Lua stack.
local function hmget(key, fields)
  local out = {}
  for i = 1, #fields, 1000 do
    local slice = {}
    for j = i, math.min(i + 999, #fields) do slice[#slice + 1] = fields[j] end
    local values = redis.call('HMGET', key, unpack(slice))
    for j = 1, #values do out[#out + 1] = values[j] end
  end
  return out
end
-- The pending writes of `member` (`<hex ns>:<id>`): field/value pairs, values nil if missing.
local function writes_of(member)
  local sep = string.find(member, ':', 1, true)
  local wp = string.sub(member, 1, sep) .. hex(string.sub(member, sep + 1))
  local fields = redis.call('ZRANGEBYLEX', KEYS[6], '[' .. wp .. ':', '(' .. wp .. ';')
  local values = hmget(KEYS[5], fields)
  local out = {}
  for i, f in ipairs(fields) do out[#out + 1] = f; out[#out + 1] = values[i] end
  return out
end
";

/// Shared by the writing scripts: the parent check, storing one checkpoint, adding writes.
const STORE: &str = r"
-- `{0, newest member}` when the namespace's newest member (between `lexmin` and `lexmax`) is not
-- `parent` (empty: the namespace has none); nil when it is.
local function check_parent(lexmin, lexmax, parent)
  local newest = redis.call('ZREVRANGEBYLEX', KEYS[1], lexmax, lexmin, 'LIMIT', 0, 1)[1]
  if (newest or '') ~= parent then return {0, newest or false} end
  return nil
end
-- One checkpoint: its blobs (field/value pairs at ARGV[bfrom..bto]), record, refs and index
-- entry. `wp` is the prefix of its own write fields, `lexmin`/`lexmax` bound its namespace.
local function store(shallow, member, record, refs, lexmin, lexmax, wp, bfrom, bto)
  redis.call('HSET', KEYS[7], 'layout', '1')
  for i = bfrom, bto, 2 do redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1]) end
  if shallow then
    -- Shallow: drop the namespace's other checkpoints, the blobs only they read, and the
    -- writes of every other checkpoint of the namespace.
    local keep = {}
    for f in string.gmatch(refs, '%S+') do keep[f] = true end
    for _, m in ipairs(redis.call('ZRANGEBYLEX', KEYS[1], lexmin, lexmax)) do
      if m ~= member then
        local old = redis.call('HGET', KEYS[3], m)
        if old then
          for f in string.gmatch(old, '%S+') do
            if not keep[f] then redis.call('HDEL', KEYS[4], f) end
          end
        end
        redis.call('HDEL', KEYS[2], m)
        redis.call('HDEL', KEYS[3], m)
        redis.call('ZREM', KEYS[1], m)
      end
    end
    for _, f in ipairs(redis.call('ZRANGEBYLEX', KEYS[6], lexmin, lexmax)) do
      if string.sub(f, 1, #wp) ~= wp then
        redis.call('HDEL', KEYS[5], f)
        redis.call('ZREM', KEYS[6], f)
      end
    end
  end
  redis.call('HSET', KEYS[2], member, record)
  redis.call('HSET', KEYS[3], member, refs)
  redis.call('ZADD', KEYS[1], 0, member)
end
-- Pending writes: field/value/replace triples at ARGV[from..to] (`1` upserts, `0` inserts only
-- if absent).
local function add_writes(from, to)
  redis.call('HSET', KEYS[7], 'layout', '1')
  for i = from, to, 3 do
    if ARGV[i + 2] == '1' then
      redis.call('HSET', KEYS[5], ARGV[i], ARGV[i + 1])
    else
      redis.call('HSETNX', KEYS[5], ARGV[i], ARGV[i + 1])
    end
    redis.call('ZADD', KEYS[6], 0, ARGV[i])
  end
end
";

/// `put_writes`: ARGV = ttl, then field/value/replace triples (`1` upserts, `0` inserts only if
/// absent).
const PUT_WRITES: &str = r"
add_writes(2, #ARGV)
expire_all(tonumber(ARGV[1]))
return 1
";

/// `put` (a commit of one) and `commit`: ARGV = ttl, shallow flag, `1` to check the parent, the parent's member (empty for
/// none), namespace lex min and max, the number of checkpoints; then for each checkpoint in
/// order: the number of its writes, their field/value/replace triples, its member, record, refs,
/// write prefix, the number of its blobs and their field/value pairs.
///
/// Returns 1 when saved. When the parent check fails nothing of the chain is written and the
/// reply is `{0, newest member}` (the member is nil for an empty namespace).
const PUT_CHAIN: &str = r"
if ARGV[3] == '1' then
  local refused = check_parent(ARGV[5], ARGV[6], ARGV[4])
  if refused then return refused end
end
local i = 8
for _ = 1, tonumber(ARGV[7]) do
  local writes = tonumber(ARGV[i])
  i = i + 1
  if writes > 0 then add_writes(i, i + 3 * writes - 1) end
  i = i + 3 * writes
  local member, record, refs, wp, blobs = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], tonumber(ARGV[i + 4])
  i = i + 5
  store(ARGV[2] == '1', member, record, refs, ARGV[5], ARGV[6], wp, i, i + 2 * blobs - 1)
  i = i + 2 * blobs
end
expire_all(tonumber(ARGV[1]))
return 1
";

/// `get_tuple`/`list`: ARGV = refresh ttl (0: do not touch expiry), `1` to include values and
/// writes, then `range` + max + min + count (newest first), or `members` + the members wanted.
///
/// Returns one entry per checkpoint found: member, record (nil if missing), refs (nil if
/// missing), blob field/value pairs, write field/value pairs (values nil if missing).
const READ: &str = r"
local members
if ARGV[3] == 'range' then
  members = redis.call('ZREVRANGEBYLEX', KEYS[1], ARGV[4], ARGV[5], 'LIMIT', 0, ARGV[6])
else
  members = {}
  for i = 4, #ARGV do
    if redis.call('ZSCORE', KEYS[1], ARGV[i]) then members[#members + 1] = ARGV[i] end
  end
end
local out = {}
for _, m in ipairs(members) do
  local refs = redis.call('HGET', KEYS[3], m)
  local entry = {m, redis.call('HGET', KEYS[2], m), refs}
  if ARGV[2] == '1' then
    local blobs = {}
    if refs then
      local fields = {}
      for f in string.gmatch(refs, '%S+') do fields[#fields + 1] = f end
      local values = hmget(KEYS[4], fields)
      for i, f in ipairs(fields) do blobs[#blobs + 1] = f; blobs[#blobs + 1] = values[i] end
    end
    entry[4] = blobs
    entry[5] = writes_of(m)
  end
  out[#out + 1] = entry
end
local ttl = tonumber(ARGV[1])
if ttl > 0 and #members > 0 then expire_all(ttl) end
return out
";

/// `get_tuple` answered from the saver's memory: ARGV = refresh ttl (0: do not touch expiry),
/// the remembered member, its record and refs as stored, `1` when the latest checkpoint was asked
/// for (else that member), then the namespace's lex min and max.
///
/// Returns `{1, write field/value pairs}` when the member is the one asked for (the newest of
/// its namespace, or present) and its record and refs are byte for byte the remembered ones;
/// `{0}` otherwise, and then the caller reads in full. Blobs are not compared: a checkpoint's
/// blobs are written with it and, as the record says which versions it reads, never rewritten.
const READ_CACHED: &str = r"
local member = ARGV[2]
if ARGV[5] == '1' then
  local newest = redis.call('ZREVRANGEBYLEX', KEYS[1], ARGV[7], ARGV[6], 'LIMIT', 0, 1)[1]
  if newest ~= member then return {0} end
elseif not redis.call('ZSCORE', KEYS[1], member) then
  return {0}
end
if redis.call('HGET', KEYS[2], member) ~= ARGV[3] or redis.call('HGET', KEYS[3], member) ~= ARGV[4] then
  return {0}
end
local writes = writes_of(member)
local ttl = tonumber(ARGV[1])
if ttl > 0 then expire_all(ttl) end
return {1, writes}
";

/// `pin`/`unpin`: ARGV = `1` to pin or `0` to unpin, then the ttl to apply when unpinned.
/// Returns 0 when the thread does not exist (nothing is created).
const PIN: &str = r"
if redis.call('EXISTS', KEYS[7]) == 0 then return 0 end
if ARGV[1] == '1' then
  redis.call('HSET', KEYS[7], 'pinned', '1')
else
  redis.call('HDEL', KEYS[7], 'pinned')
end
expire_all(tonumber(ARGV[2]))
return 1
";

/// `prune`: ARGV = how many checkpoints to keep per namespace (0 deletes the thread).
///
/// Returns how many checkpoints were removed. Everything else of the thread is swept against
/// the kept checkpoints: a write whose checkpoint is gone and a blob no kept checkpoint refers
/// to are deleted, wherever they came from. Expiry is left alone: `HDEL`/`ZREM` keep a key's
/// deadline, and a pinned thread stays pinned.
const PRUNE: &str = r"
local keep = tonumber(ARGV[1])
-- Score 0 everywhere, so ZRANGE is lexicographic: namespace first, then checkpoint id (ids
-- sort by creation time), so each namespace is one run with its newest members last.
local members = redis.call('ZRANGE', KEYS[1], 0, -1)
if keep == 0 then
  redis.call('UNLINK', unpack(KEYS))
  return #members
end
local function ns_of(m) return string.sub(m, 1, string.find(m, ':', 1, true) - 1) end
local gone, kept = {}, {}
local i = 1
while i <= #members do
  local ns, j = ns_of(members[i]), i
  while j < #members and ns_of(members[j + 1]) == ns do j = j + 1 end
  for k = i, j do
    if k <= j - keep then gone[#gone + 1] = members[k] else kept[#kept + 1] = members[k] end
  end
  i = j + 1
end
-- Variadic deletes in slices: `unpack` of a very long list would overflow the Lua stack.
local function drop(cmd, key, fields)
  for s = 1, #fields, 1000 do
    local slice = {}
    for t = s, math.min(s + 999, #fields) do slice[#slice + 1] = fields[t] end
    redis.call(cmd, key, unpack(slice))
  end
end
drop('ZREM', KEYS[1], gone)
drop('HDEL', KEYS[2], gone)
drop('HDEL', KEYS[3], gone)
local referenced, live = {}, {}
local refs = hmget(KEYS[3], kept)
for n, m in ipairs(kept) do
  for f in string.gmatch(refs[n] or '', '%S+') do referenced[f] = true end
  local sep = string.find(m, ':', 1, true)
  live[string.sub(m, 1, sep) .. hex(string.sub(m, sep + 1))] = true
end
local blobs = {}
for _, f in ipairs(redis.call('HKEYS', KEYS[4])) do
  if not referenced[f] then blobs[#blobs + 1] = f end
end
drop('HDEL', KEYS[4], blobs)
-- A write field starts `<hex ns>:<hex checkpoint id>:`, as the kept prefixes in `live`.
local writes = {}
for _, f in ipairs(redis.call('ZRANGE', KEYS[6], 0, -1)) do
  if not live[string.match(f, '^[^:]*:[^:]*') or ''] then writes[#writes + 1] = f end
end
drop('HDEL', KEYS[5], writes)
drop('ZREM', KEYS[6], writes)
return #gone
";

/// `delete_for_runs` on one thread: ARGV = the run ids.
///
/// Removes every checkpoint whose record's metadata has a string `run_id` among them, its pending
/// writes, and every blob no remaining checkpoint refers to; a thread left without checkpoints
/// loses all its keys. Returns `{1, removed}`, or `{0, member}` naming a record that is not JSON
/// (nothing is changed then). Expiry is left alone, as `prune` leaves it.
const DELETE_RUNS: &str = r"
local runs = {}
for i = 1, #ARGV do runs[ARGV[i]] = true end
local members = redis.call('ZRANGE', KEYS[1], 0, -1)
local records = hmget(KEYS[2], members)
local gone, kept = {}, {}
for n, m in ipairs(members) do
  local run = nil
  if records[n] then
    local ok, record = pcall(cjson.decode, records[n])
    if not ok or type(record) ~= 'table' then return {0, m} end
    if type(record.metadata) == 'table' then run = record.metadata.run_id end
  end
  if type(run) == 'string' and runs[run] then gone[#gone + 1] = m else kept[#kept + 1] = m end
end
if #gone == 0 then return {1, 0} end
if #kept == 0 then
  redis.call('UNLINK', unpack(KEYS))
  return {1, #gone}
end
local function drop(cmd, key, fields)
  for s = 1, #fields, 1000 do
    local slice = {}
    for t = s, math.min(s + 999, #fields) do slice[#slice + 1] = fields[t] end
    redis.call(cmd, key, unpack(slice))
  end
end
local writes = {}
for _, m in ipairs(gone) do
  local pairs_of = writes_of(m)
  for i = 1, #pairs_of, 2 do writes[#writes + 1] = pairs_of[i] end
end
drop('ZREM', KEYS[1], gone)
drop('HDEL', KEYS[2], gone)
drop('HDEL', KEYS[3], gone)
drop('HDEL', KEYS[5], writes)
drop('ZREM', KEYS[6], writes)
local referenced = {}
for _, refs in ipairs(hmget(KEYS[3], kept)) do
  for f in string.gmatch(refs or '', '%S+') do referenced[f] = true end
end
local blobs = {}
for _, f in ipairs(redis.call('HKEYS', KEYS[4])) do
  if not referenced[f] then blobs[#blobs + 1] = f end
end
drop('HDEL', KEYS[4], blobs)
return {1, #gone}
";

/// `copy_thread`, the source's half: the fields and values of its checkpoint records, blob
/// references, blobs and pending writes, read at one moment.
const COPY_READ: &str = r"
return {
  redis.call('HGETALL', KEYS[2]),
  redis.call('HGETALL', KEYS[3]),
  redis.call('HGETALL', KEYS[4]),
  redis.call('HGETALL', KEYS[5]),
}
";

/// `copy_thread`, the target's half: ARGV = ttl, then the number of field/value pairs of the
/// records, references, blobs and writes, then those pairs in that order.
///
/// Returns 0, writing nothing, when the target has a checkpoint; otherwise stores everything,
/// indexes the records and writes, gives the thread its expiry, and returns 1.
const COPY_WRITE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local counts = {tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])}
if counts[1] == 0 then return 1 end
local hashes = {KEYS[2], KEYS[3], KEYS[4], KEYS[5]}
local i = 6
for h = 1, 4 do
  for _ = 1, counts[h] do
    redis.call('HSET', hashes[h], ARGV[i], ARGV[i + 1])
    if h == 1 then redis.call('ZADD', KEYS[1], 0, ARGV[i]) end
    if h == 4 then redis.call('ZADD', KEYS[6], 0, ARGV[i]) end
    i = i + 2
  end
end
redis.call('HSET', KEYS[7], 'layout', '1')
expire_all(tonumber(ARGV[1]))
return 1
";

fn script(body: &str) -> Script {
    Script::new(&format!("{PRELUDE}{body}"))
}

/// A writing script: the prelude and [`STORE`]'s functions, then `body`.
fn writing_script(body: &str) -> Script {
    Script::new(&format!("{PRELUDE}{STORE}{body}"))
}

/// See [`PUT_WRITES`].
pub(crate) static PUT_WRITES_SCRIPT: LazyLock<Script> = LazyLock::new(|| writing_script(PUT_WRITES));
/// See [`PUT_CHAIN`].
pub(crate) static PUT_CHAIN_SCRIPT: LazyLock<Script> = LazyLock::new(|| writing_script(PUT_CHAIN));
/// See [`READ`].
pub(crate) static READ_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(READ));
/// See [`READ_CACHED`].
pub(crate) static READ_CACHED_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(READ_CACHED));
/// See [`PIN`].
pub(crate) static PIN_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(PIN));
/// See [`PRUNE`].
pub(crate) static PRUNE_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(PRUNE));
/// See [`DELETE_RUNS`].
pub(crate) static DELETE_RUNS_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(DELETE_RUNS));
/// See [`COPY_READ`].
pub(crate) static COPY_READ_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(COPY_READ));
/// See [`COPY_WRITE`].
pub(crate) static COPY_WRITE_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(COPY_WRITE));
