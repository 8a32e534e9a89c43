"""Runs LangGraph's checkpointer conformance suite on the mnemograph savers.

Usage: python conformance.py --mysql mysql://root@127.0.0.1:3306 --redis redis://127.0.0.1:6379/
       [--postgres postgres://postgres@127.0.0.1:5432]
       [--only memory,mysql,redis,sqlite (the default), postgres] [--report FILE]

Each capability suite gets a fresh saver: the MySQL and Postgres ones a database emptied for it,
the Redis one a key prefix of its own (its keys are deleted afterwards), the SQLite one a new file
in a temporary directory. Prints LangGraph's report for every
saver and exits 1 unless every base and extended capability is detected and passes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import uuid

import redis
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.report import ProgressCallbacks

from mnemograph_checkpoint import InMemorySaver, MySQLSaver, PostgresSaver, RedisSaver, SQLiteSaver
from support import fresh_database

DATABASE = "graph_py_conformance"


def emptied_database(server: str) -> str:
    url, conn = fresh_database(server, DATABASE)
    conn.close()
    return url


def emptied_postgres_database(server: str) -> str:
    import psycopg

    with psycopg.connect(f"{server.rstrip('/')}/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {DATABASE}")
    return f"{server.rstrip('/')}/{DATABASE}"


def registrations(args: argparse.Namespace) -> list:
    wanted = set(args.only.split(","))
    out = []
    if "memory" in wanted:

        @checkpointer_test(name="mnemograph InMemorySaver")
        async def memory():
            yield InMemorySaver()

        out.append(memory)
    if "mysql" in wanted:

        @checkpointer_test(name="mnemograph MySQLSaver")
        async def mysql():
            saver = await MySQLSaver.aconnect(emptied_database(args.mysql))
            await saver.asetup()
            yield saver

        out.append(mysql)
    if "postgres" in wanted:

        @checkpointer_test(name="mnemograph PostgresSaver")
        async def postgres():
            saver = await PostgresSaver.aconnect(emptied_postgres_database(args.postgres))
            await saver.asetup()
            yield saver

        out.append(postgres)
    if "redis" in wanted:

        @checkpointer_test(name="mnemograph RedisSaver")
        async def redis_saver():
            prefix = f"conformance-{uuid.uuid4().hex}"
            yield await RedisSaver.aconnect(args.redis, key_prefix=prefix)
            client = redis.Redis.from_url(args.redis)
            keys = list(client.scan_iter(match=f"*{prefix}*", count=1000))
            if keys:
                client.delete(*keys)
            client.close()

        out.append(redis_saver)
    if "sqlite" in wanted:

        @checkpointer_test(name="mnemograph SQLiteSaver")
        async def sqlite_saver():
            with tempfile.TemporaryDirectory() as directory:
                yield await SQLiteSaver.aconnect(f"{directory}/conformance.sqlite")

        out.append(sqlite_saver)
    return out


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mysql", default="mysql://root@127.0.0.1:3306")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/")
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--only", default="memory,mysql,redis,sqlite")
    parser.add_argument("--report")
    args = parser.parse_args()
    ok = True
    summary = {}
    for registered in registrations(args):
        report = await validate(registered, progress=ProgressCallbacks.default())
        report.print_report()
        for capability, result in report.results.items():
            for failure in result.failures:
                print(f"  FAILED {capability}: {failure}")
        summary[registered.name] = report.to_dict()
        complete = report.passed_all() and all(r.detected for r in report.results.values())
        ok = ok and complete
    if args.report:
        with open(args.report, "w") as f:
            json.dump(summary, f, indent=2)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
