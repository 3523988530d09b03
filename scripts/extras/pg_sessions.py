"""How many sessions a PostgreSQL session store holds (scripts/extras.sh, postgres extra).

Usage: ``python pg_sessions.py URL EXPECTED``: exit status 0 when the store at ``URL`` lists
exactly ``EXPECTED`` sessions through acpio's own store, 1 (with the reason) otherwise.
"""

from __future__ import annotations

import sys

import anyio

from acpio.store import open_session_store


async def count(url: str) -> int:
    store = open_session_store(url)
    try:
        return len(await store.list())
    finally:
        close = getattr(store, "close", None)
        if callable(close):
            close()


def main() -> int:
    url, expected = sys.argv[1], int(sys.argv[2])
    found = anyio.run(count, url)
    if found != expected:
        print(f"pg_sessions: expected {expected} sessions in {url}, found {found}", file=sys.stderr)
        return 1
    print(f"  postgres: the {found} sessions are in PostgreSQL")
    return 0


if __name__ == "__main__":
    sys.exit(main())
