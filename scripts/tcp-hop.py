#!/usr/bin/env python3
"""A TCP forwarder 127.0.0.1:3307 -> 127.0.0.1:3306: one extra network hop in front of the local
MySQL/MariaDB, so a benchmark can show what round trips cost when the database is on another host
(loopback hides them). Usage: python3 scripts/tcp-hop.py [DELAY_US]; DELAY_US (default 0) is added
per chunk and direction, at the resolution of the event loop timer (~1 ms)."""
import asyncio, sys
DELAY = float(sys.argv[1]) / 1e6 if len(sys.argv) > 1 else 0.0
async def pipe(r, w):
    try:
        while True:
            data = await r.read(65536)
            if not data: break
            await asyncio.sleep(DELAY)
            w.write(data); await w.drain()
    finally:
        w.close()
async def handle(cr, cw):
    sr, sw = await asyncio.open_connection('127.0.0.1', 3306)
    await asyncio.gather(pipe(cr, sw), pipe(sr, cw))
async def main():
    srv = await asyncio.start_server(handle, '127.0.0.1', 3307)
    async with srv: await srv.serve_forever()
asyncio.run(main())
