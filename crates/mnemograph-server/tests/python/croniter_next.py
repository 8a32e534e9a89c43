"""The next time of each schedule after its base time, as LangGraph's server computes it
(`croniter`, in UTC unless a timezone is given), for comparing with another server's.

    python croniter_next.py < [{"schedule": ..., "timezone": ..., "base": ISO 8601}, ...]

Prints the JSON list of the next times, ISO 8601 in UTC.
"""

import datetime
import json
import sys
import zoneinfo

import croniter

out = []
for item in json.load(sys.stdin):
    base = datetime.datetime.fromisoformat(item["base"])
    if item.get("timezone"):
        base = base.astimezone(zoneinfo.ZoneInfo(item["timezone"]))
    nxt = croniter.croniter(item["schedule"], base).get_next(datetime.datetime)
    out.append(nxt.astimezone(datetime.timezone.utc).isoformat())
print(json.dumps(out))
