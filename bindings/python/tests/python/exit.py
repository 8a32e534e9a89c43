"""Exiting with operations still under way: the process ends cleanly.

Usage: python exit.py MYSQL_SERVER   (MYSQL_SERVER without a database)

Starts many awaitables on a MySQL saver (asyncio futures of the bindings, not tasks, so
`asyncio.run` does not cancel them), cancels some, and returns from the loop while the rest are
still running, so their results arrive while the interpreter shuts down. The runtime's threads
must then leave the interpreter alone: the process exits 0, where an attach to a finalizing
interpreter aborts it.
"""

from __future__ import annotations

import asyncio
import sys

from mnemograph_checkpoint import MySQLSaver
from support import fresh_database


async def main(server: str) -> None:
    url, conn = fresh_database(server, "graph_exit")
    conn.close()
    saver = await MySQLSaver.aconnect(url)
    await saver.asetup()
    # The native awaitables under `aget_tuple`: asyncio futures that nothing cancels at exit.
    pending = [saver._native.get_tuple(f"t{i}", "", None) for i in range(5000)]
    for future in pending[::3]:
        future.cancel()
    # One of them finished: the saver works, and the others are still in flight.
    await asyncio.wait(pending[1::3], return_when=asyncio.FIRST_COMPLETED)
    print("left with operations under way")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
    sys.exit(0)
