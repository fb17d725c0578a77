#!/usr/bin/python3
# ===- report_check_trace.py - read a trace back as its consumers would --=== #
# Parses a Chrome trace-event JSON file with Python's strict json module
# (what `syspgo export` writes must be valid JSON, not just JavaScript) and
# prints what report_test compares with the database, one fact a line:
#   events N                        events in traceEvents
#   cat CAT PH N                    events per category and phase
#   process_name PID NAME           process_name metadata
#   thread_name PID TID NAME        thread_name metadata
#   tracks N                        (pid, tid) pairs with timed events
#   nonmonotonic N                  events earlier than the one before on their track
#   misnested N                     complete events that overlap a sibling instead of nesting
#   badts N                         timed events without a numeric ts >= 0 (and dur for "X")
#   max_ts_us X                     the latest ts + dur, microseconds
# Exits 1 with the parser's message if the file is not valid JSON.
import collections
import json
import sys


def main():
    try:
        with open(sys.argv[1], encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print("not a valid trace: %s" % e, file=sys.stderr)
        return 1
    events = doc["traceEvents"]
    print("events %d" % len(events))
    cats = collections.Counter((e.get("cat", "-"), e["ph"]) for e in events)
    for (cat, ph), n in sorted(cats.items()):
        print("cat %s %s %d" % (cat, ph, n))
    last = {}
    open_ends = collections.defaultdict(list)  # per track: ends of the enclosing complete events
    nonmono = misnested = badts = 0
    max_ts = 0.0
    for e in events:
        if e["ph"] == "M":
            if e["name"] == "process_name":
                print("process_name %d %s" % (e["pid"], e["args"]["name"]))
            elif e["name"] == "thread_name":
                print("thread_name %d %d %s" % (e["pid"], e["tid"], e["args"]["name"]))
            continue
        ts = e.get("ts")
        dur = e.get("dur", 0) if e["ph"] == "X" else 0
        if not isinstance(ts, (int, float)) or ts < 0 or not isinstance(dur, (int, float)) or dur < 0 \
                or (e["ph"] == "X" and "dur" not in e):
            badts += 1
            continue
        track = (e["pid"], e["tid"])
        if track in last and ts < last[track]:
            nonmono += 1
        last[track] = ts
        max_ts = max(max_ts, ts + dur)
        if e["ph"] == "X":
            ends = open_ends[track]
            while ends and ends[-1] <= ts:
                ends.pop()
            if ends and ts + dur > ends[-1] + 1e-6:
                misnested += 1
            ends.append(ts + dur)
    print("tracks %d" % len(last))
    print("nonmonotonic %d" % nonmono)
    print("misnested %d" % misnested)
    print("badts %d" % badts)
    print("max_ts_us %.3f" % max_ts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
