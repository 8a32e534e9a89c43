"""LangGraph checkpoint savers backed by the mnemograph Rust savers.

``MySQLSaver``, ``PostgresSaver``, ``RedisSaver``, ``SQLiteSaver`` and ``InMemorySaver`` are ``BaseCheckpointSaver``s with the sync
and async methods, including LangGraph's extended ``delete_for_runs``, ``copy_thread`` and
``prune``. Pass one to ``compile(checkpointer=...)``::

    from mnemograph_checkpoint import MySQLSaver

    saver = MySQLSaver.connect("mysql://root@127.0.0.1:3306/app")
    saver.setup()
    graph = builder.compile(checkpointer=saver)

The MySQL saver writes the tables and rows of ``langgraph-checkpoint-mysql``; values are
serialized by the saver's ``serde`` (LangGraph's ``JsonPlusSerializer`` by default), so a thread
written here is read by the Python and Rust savers alike, and the other way round.
"""

from __future__ import annotations

from mnemograph_checkpoint.errors import (
    BackendError,
    CheckpointError,
    ConflictError,
    CorruptError,
    InvalidInputError,
    UnsupportedError,
)
from mnemograph_checkpoint.savers import (
    InMemorySaver,
    MySQLSaver,
    PostgresSaver,
    RedisSaver,
    RustSaver,
    SQLiteSaver,
)

__all__ = [
    "BackendError",
    "CheckpointError",
    "ConflictError",
    "CorruptError",
    "InMemorySaver",
    "InvalidInputError",
    "MySQLSaver",
    "PostgresSaver",
    "RedisSaver",
    "RustSaver",
    "SQLiteSaver",
    "UnsupportedError",
]
