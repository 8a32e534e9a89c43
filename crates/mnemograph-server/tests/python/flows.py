"""What the SDK flow scripts share: running each flow and reporting how it went, and the HTTP
status a call fails with."""

import sys
import traceback

import httpx
from langgraph_sdk.errors import APIError

failures = []


def flow(fn):
    """Runs `fn` at once and prints `ok` or what went wrong; the next flow runs either way."""
    try:
        fn()
        print(f"ok    {fn.__name__}", flush=True)
    except Exception:  # noqa: BLE001 - every failure is reported, then the next flow runs
        failures.append(fn.__name__)
        print(f"FAIL  {fn.__name__}\n{traceback.format_exc()}", flush=True)
    return fn


def status_of(call):
    """The HTTP status a call fails with (None when it succeeds); a stream is read to its end."""
    try:
        result = call()
        if hasattr(result, "__next__"):
            list(result)
    except (APIError, httpx.HTTPStatusError) as e:
        return e.response.status_code
    return None


def finish():
    """Says how the flows went; the exit status is the number of failures."""
    print(f"{len(failures)} failed: {failures}" if failures else "all flows passed", flush=True)
    sys.exit(len(failures))
