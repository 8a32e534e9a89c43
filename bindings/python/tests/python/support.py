"""What the scripts of this directory share: a fresh MySQL database."""

from __future__ import annotations

from urllib.parse import urlparse

import pymysql


def fresh_database(server: str, name: str) -> tuple[str, pymysql.Connection]:
    """Drops and recreates database `name` on `server` (a URL without a database); returns its
    URL and an autocommit connection to it."""
    u = urlparse(server)
    conn = pymysql.connect(
        host=u.hostname, port=u.port or 3306, user=u.username or "root", password=u.password or "", autocommit=True
    )
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {name}")
        cur.execute(f"CREATE DATABASE {name} CHARACTER SET utf8mb4")
        cur.execute(f"USE {name}")
    return f"{server.rstrip('/')}/{name}", conn
