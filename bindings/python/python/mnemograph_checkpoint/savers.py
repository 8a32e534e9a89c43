"""``BaseCheckpointSaver`` classes over the native savers."""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from mnemograph_checkpoint._native import NativeSaver
from mnemograph_checkpoint.errors import InvalidInputError

_INT64 = (-(2**63), 2**64 - 1)


def _is_inline(value: Any) -> bool:
    """Whether LangGraph's SQL savers keep ``value`` inside the checkpoint document."""
    if value is None or isinstance(value, (bool, str)):
        return True
    if isinstance(value, int):
        return _INT64[0] <= value <= _INT64[1]
    if isinstance(value, float):
        return math.isfinite(value)
    return False


def _address(config: RunnableConfig) -> tuple[str, str, str | None]:
    configurable = config.get("configurable") or {}
    thread_id = configurable.get("thread_id")
    if thread_id is None:
        raise InvalidInputError("the config has no configurable.thread_id")
    return str(thread_id), configurable.get("checkpoint_ns", "") or "", get_checkpoint_id(config)


def _config(thread_id: str, checkpoint_ns: str, checkpoint_id: str) -> RunnableConfig:
    return {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": checkpoint_ns,
            "checkpoint_id": checkpoint_id,
        }
    }


def _versions(versions: ChannelVersions) -> list[tuple[str, str]]:
    return [(channel, str(version)) for channel, version in versions.items()]


class RustSaver(BaseCheckpointSaver[str]):
    """A ``BaseCheckpointSaver`` whose storage is a Rust saver.

    Values are serialized by ``self.serde`` (``serde.dumps_typed``) and stored byte for byte;
    versions are strings, as LangGraph's SQL savers write them. Every method exists in a sync
    and an async form; the sync ones release the interpreter while the Rust saver works.
    """

    def __init__(self, native: NativeSaver, *, serde: SerializerProtocol | None = None) -> None:
        super().__init__(serde=serde)
        self._native = native

    # Conversions ---------------------------------------------------------------------------

    def _put_args(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> tuple[Any, ...]:
        thread_id, checkpoint_ns, parent_id = _address(config)
        if checkpoint.get("pending_sends"):
            raise InvalidInputError(
                "checkpoints with pending_sends (format v1-v3) are not stored; "
                "LangGraph keeps sends as pending writes since format v4"
            )
        values = []
        for channel, value in checkpoint["channel_values"].items():
            if channel in new_versions:
                values.append((channel, *self.serde.dumps_typed(value)))
            elif _is_inline(value):
                # Unchanged: only the SQL document needs it, inline; blobs are per version.
                values.append((channel, None, value))
        cp = (
            int(checkpoint.get("v", 4)),
            checkpoint["id"],
            checkpoint["ts"],
            values,
            _versions(checkpoint["channel_versions"]),
            [(node, _versions(seen)) for node, seen in checkpoint["versions_seen"].items()],
            checkpoint.get("updated_channels"),
        )
        md = json.dumps(get_serializable_checkpoint_metadata(config, metadata))
        return thread_id, checkpoint_ns, parent_id, cp, md, _versions(new_versions)

    def _writes_args(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]]
    ) -> tuple[str, str, str | None, list[tuple[str, str, bytes]]]:
        thread_id, checkpoint_ns, checkpoint_id = _address(config)
        encoded = [(channel, *self.serde.dumps_typed(value)) for channel, value in writes]
        return thread_id, checkpoint_ns, checkpoint_id, encoded

    def _list_args(
        self,
        config: RunnableConfig | None,
        filter: dict[str, Any] | None,
        before: RunnableConfig | None,
        limit: int | None,
    ) -> tuple[Any, ...]:
        thread_id, checkpoint_ns = None, ""
        if config is not None:
            thread_id, checkpoint_ns, _ = _address(config)
        before_id = get_checkpoint_id(before) if before is not None else None
        if limit is not None and limit < 0:
            raise InvalidInputError(f"limit must not be negative, not {limit}")
        return thread_id, checkpoint_ns, json.dumps(filter) if filter else None, before_id, limit

    def _decode(self, kind: str | None, payload: Any) -> Any:
        return payload if kind is None else self.serde.loads_typed((kind, payload))

    def _tuple(self, raw: Any) -> CheckpointTuple | None:
        if raw is None:
            return None
        thread_id, checkpoint_ns, checkpoint_id, parent_id, cp, metadata, writes = raw
        v, id_, ts, values, versions, seen, updated = cp
        checkpoint: Checkpoint = {
            "v": v,
            "id": id_,
            "ts": ts,
            "channel_values": {ch: self._decode(kind, p) for ch, kind, p in values},
            "channel_versions": versions,
            "versions_seen": seen,
            "updated_channels": updated,
        }
        return CheckpointTuple(
            config=_config(thread_id, checkpoint_ns, checkpoint_id),
            checkpoint=checkpoint,
            metadata=json.loads(metadata),
            parent_config=_config(thread_id, checkpoint_ns, parent_id) if parent_id else None,
            pending_writes=[(task, ch, self._decode(kind, p)) for task, ch, kind, p in writes],
        )

    def _one(self, filter: dict[str, Any] | None, before_id: str | None, t: Any) -> list[CheckpointTuple]:
        """``list`` of a config naming one checkpoint: that checkpoint, if it passes."""
        tup = self._tuple(t)
        if tup is None:
            return []
        if filter and any(tup.metadata.get(k) != v for k, v in filter.items()):
            return []
        if before_id is not None and tup.checkpoint["id"] >= before_id:
            return []
        return [tup]

    # Sync ----------------------------------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self._tuple(self._native.get_tuple(*_address(config), blocking=True))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        args = self._list_args(config, filter, before, limit)
        if config is not None and get_checkpoint_id(config) and limit != 0:
            yield from self._one(filter, args[3], self._native.get_tuple(*_address(config), blocking=True))
            return
        for raw in self._native.list(*args, blocking=True):
            yield self._tuple(raw)

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        args = self._put_args(config, checkpoint, metadata, new_versions)
        return _config(*self._native.put(*args, blocking=True))

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self._native.put_writes(*self._writes_args(config, writes), task_id, task_path, blocking=True)

    def delete_thread(self, thread_id: str) -> None:
        self._native.delete_thread(str(thread_id), blocking=True)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        self._native.delete_for_runs([str(r) for r in run_ids], blocking=True)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self._native.copy_thread(str(source_thread_id), str(target_thread_id), blocking=True)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self._native.prune([str(t) for t in thread_ids], strategy, blocking=True)

    # Async ---------------------------------------------------------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self._tuple(await self._native.get_tuple(*_address(config)))

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        args = self._list_args(config, filter, before, limit)
        if config is not None and get_checkpoint_id(config) and limit != 0:
            for tup in self._one(filter, args[3], await self._native.get_tuple(*_address(config))):
                yield tup
            return
        for raw in await self._native.list(*args):
            yield self._tuple(raw)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        args = self._put_args(config, checkpoint, metadata, new_versions)
        return _config(*await self._native.put(*args))

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await self._native.put_writes(*self._writes_args(config, writes), task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await self._native.delete_thread(str(thread_id))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await self._native.delete_for_runs([str(r) for r in run_ids])

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await self._native.copy_thread(str(source_thread_id), str(target_thread_id))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await self._native.prune([str(t) for t in thread_ids], strategy)

    # Versions ------------------------------------------------------------------------------

    def get_next_version(self, current: str | int | float | None, channel: None = None) -> str:
        return self._native.next_version(None if current is None else str(current))


class InMemorySaver(RustSaver):
    """Checkpoints in this process's memory, in the Rust in-memory saver."""

    def __init__(self, *, serde: SerializerProtocol | None = None) -> None:
        super().__init__(NativeSaver.memory(), serde=serde)


class MySQLSaver(RustSaver):
    """Checkpoints in MySQL or MariaDB, in the tables of ``langgraph-checkpoint-mysql``.

    Connect with ``MySQLSaver.connect(url)`` (or ``await MySQLSaver.aconnect(url)``), then call
    ``setup()`` once per database to create or upgrade the tables.
    """

    @classmethod
    def connect(cls, url: str, *, serde: SerializerProtocol | None = None) -> MySQLSaver:
        """Connects to ``mysql://user:password@host:port/database``."""
        return cls(NativeSaver.mysql(url, blocking=True), serde=serde)

    @classmethod
    async def aconnect(cls, url: str, *, serde: SerializerProtocol | None = None) -> MySQLSaver:
        """Connects to ``mysql://user:password@host:port/database``."""
        return cls(await NativeSaver.mysql(url), serde=serde)

    @classmethod
    @contextmanager
    def from_conn_string(cls, url: str, *, serde: SerializerProtocol | None = None) -> Iterator[MySQLSaver]:
        """LangGraph's constructor: a context manager yielding a connected saver."""
        yield cls.connect(url, serde=serde)

    @classmethod
    @asynccontextmanager
    async def afrom_conn_string(cls, url: str, *, serde: SerializerProtocol | None = None) -> AsyncIterator[MySQLSaver]:
        """The async form of ``from_conn_string``."""
        yield await cls.aconnect(url, serde=serde)

    def setup(self) -> int:
        """Creates or upgrades the tables; returns the number of migrations that ran."""
        return self._native.setup(blocking=True)

    async def asetup(self) -> int:
        """Creates or upgrades the tables; returns the number of migrations that ran."""
        return await self._native.setup()


class PostgresSaver(RustSaver):
    """Checkpoints in PostgreSQL, in the tables of ``langgraph-checkpoint-postgres``.

    Connect with ``PostgresSaver.connect(url)`` (or ``await PostgresSaver.aconnect(url)``), then
    call ``setup()`` once per database to create or upgrade the tables.
    """

    @classmethod
    def connect(cls, url: str, *, serde: SerializerProtocol | None = None) -> PostgresSaver:
        """Connects to ``postgres://user:password@host:port/database``."""
        return cls(NativeSaver.postgres(url, blocking=True), serde=serde)

    @classmethod
    async def aconnect(cls, url: str, *, serde: SerializerProtocol | None = None) -> PostgresSaver:
        """Connects to ``postgres://user:password@host:port/database``."""
        return cls(await NativeSaver.postgres(url), serde=serde)

    @classmethod
    @contextmanager
    def from_conn_string(cls, url: str, *, serde: SerializerProtocol | None = None) -> Iterator[PostgresSaver]:
        """LangGraph's constructor: a context manager yielding a connected saver."""
        yield cls.connect(url, serde=serde)

    @classmethod
    @asynccontextmanager
    async def afrom_conn_string(
        cls, url: str, *, serde: SerializerProtocol | None = None
    ) -> AsyncIterator[PostgresSaver]:
        """The async form of ``from_conn_string``."""
        yield await cls.aconnect(url, serde=serde)

    def setup(self) -> int:
        """Creates or upgrades the tables; returns the number of migrations that ran."""
        return self._native.setup(blocking=True)

    async def asetup(self) -> int:
        """Creates or upgrades the tables; returns the number of migrations that ran."""
        return await self._native.setup()


class RedisSaver(RustSaver):
    """Checkpoints on plain Redis (no modules), each thread's keys written atomically.

    ``ttl`` (seconds) expires a whole thread that long after its last write; ``None`` keeps
    threads until deleted. ``key_prefix`` namespaces the keys of one application.
    """

    @classmethod
    def connect(
        cls,
        url: str,
        *,
        ttl: float | None = None,
        key_prefix: str | None = None,
        serde: SerializerProtocol | None = None,
    ) -> RedisSaver:
        """Connects to ``redis://host:port/db``."""
        return cls(NativeSaver.redis(url, ttl, key_prefix, blocking=True), serde=serde)

    @classmethod
    async def aconnect(
        cls,
        url: str,
        *,
        ttl: float | None = None,
        key_prefix: str | None = None,
        serde: SerializerProtocol | None = None,
    ) -> RedisSaver:
        """Connects to ``redis://host:port/db``."""
        return cls(await NativeSaver.redis(url, ttl, key_prefix), serde=serde)

    @classmethod
    @contextmanager
    def from_conn_string(cls, url: str, **kwargs: Any) -> Iterator[RedisSaver]:
        """LangGraph's constructor: a context manager yielding a connected saver."""
        yield cls.connect(url, **kwargs)

    def setup(self) -> int:
        """Nothing to create on Redis; kept so that code written for other savers runs."""
        return 0

    async def asetup(self) -> int:
        """Nothing to create on Redis; kept so that code written for other savers runs."""
        return 0


class SQLiteSaver(RustSaver):
    """Checkpoints in one SQLite file, in the tables and bytes of ``langgraph-checkpoint-sqlite``.

    ``SQLiteSaver.connect(target)`` opens (creating when missing) a file path, a ``sqlite://``
    URL or ``":memory:"`` and creates the tables; LangGraph's ``SqliteSaver`` and this saver
    continue each other's threads in the same file. A write that waits longer than the busy
    timeout for another connection's lock raises ``BackendError``.
    """

    @classmethod
    def connect(cls, target: str, *, serde: SerializerProtocol | None = None) -> SQLiteSaver:
        """Opens the database ``target``."""
        return cls(NativeSaver.sqlite(target, blocking=True), serde=serde)

    @classmethod
    async def aconnect(cls, target: str, *, serde: SerializerProtocol | None = None) -> SQLiteSaver:
        """Opens the database ``target``."""
        return cls(await NativeSaver.sqlite(target), serde=serde)

    @classmethod
    @contextmanager
    def from_conn_string(cls, target: str, *, serde: SerializerProtocol | None = None) -> Iterator[SQLiteSaver]:
        """LangGraph's constructor: a context manager yielding an open saver."""
        yield cls.connect(target, serde=serde)

    @classmethod
    @asynccontextmanager
    async def afrom_conn_string(
        cls, target: str, *, serde: SerializerProtocol | None = None
    ) -> AsyncIterator[SQLiteSaver]:
        """The async form of ``from_conn_string``."""
        yield await cls.aconnect(target, serde=serde)
