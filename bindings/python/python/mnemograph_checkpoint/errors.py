"""Exceptions raised by the mnemograph savers.

Every error the Rust savers report arrives as one of these classes, with the Rust error's
message. A Rust panic arrives as ``RuntimeError``; it never ends the interpreter.
"""

from __future__ import annotations


class CheckpointError(Exception):
    """Base class of every error the savers raise."""


class BackendError(CheckpointError):
    """The database failed or could not be reached."""


class CorruptError(CheckpointError):
    """A stored record or value is malformed."""


class ConflictError(CheckpointError):
    """Another writer stored a checkpoint first; nothing was saved."""


class InvalidInputError(CheckpointError, ValueError):
    """The call's arguments cannot be stored (bad config, value or metadata)."""


class UnsupportedError(CheckpointError, NotImplementedError):
    """The backend does not implement the operation."""


__all__ = [
    "BackendError",
    "CheckpointError",
    "ConflictError",
    "CorruptError",
    "InvalidInputError",
    "UnsupportedError",
]
