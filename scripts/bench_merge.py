#!/usr/bin/python3
"""Merges the alternated launches of one benchmark into one record file.

    bench_merge.py OUT.json LAUNCH.json [LAUNCH.json ...]

The fair runs of `make bench` (scripts/run-bench.sh) measure each side of a
comparison in launches of its own (a threaded launch for ep and funneled, a
flat one for mpi and ref), alternated over several rounds. This script sets
them side by side: for every point -- (test, mode, bytes, pairs, window) --
it writes one record in the demos/bench JSON schema where

  t_avg_us        the median over the launches of each launch's t_avg
  t_min_us        the smallest t_min of any launch
  t_max_us        the largest t_max of any launch
  MBps, msg_rate  the median over the launches
  repetitions     the repetitions of all launches together

and the other fields are the first launch's. A point measured by only some
launches is merged over those. Records keep the order in which the first
launch that measured them wrote them.
"""
import json
import statistics
import sys


def key_of(record):
    return (record["test"], record["mode"], record["bytes"], record.get("pairs", 0),
            record.get("window", 0))


def merge(launches):
    order = []
    points = {}
    for records in launches:
        for record in records:
            key = key_of(record)
            if key not in points:
                order.append(key)
                points[key] = []
            points[key].append(record)
    merged = []
    for key in order:
        group = points[key]
        out = dict(group[0])
        out["t_avg_us"] = statistics.median(r["t_avg_us"] for r in group)
        out["t_min_us"] = min(r["t_min_us"] for r in group)
        out["t_max_us"] = max(r["t_max_us"] for r in group)
        out["MBps"] = statistics.median(r.get("MBps", 0.0) for r in group)
        rates = [r["msg_rate"] for r in group if r.get("msg_rate") is not None]
        if rates:
            out["msg_rate"] = statistics.median(rates)
        out["repetitions"] = sum(r.get("repetitions", 0) for r in group)
        merged.append(out)
    return merged


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    launches = []
    for path in sys.argv[2:]:
        try:
            with open(path) as f:
                launches.append(json.load(f))
        except (OSError, json.JSONDecodeError) as error:
            sys.exit(f"bench_merge: {path}: {error}")
    with open(sys.argv[1], "w") as f:
        json.dump(merge(launches), f, indent=1)
        f.write("\n")
    print(f"bench_merge: {sys.argv[1]} from {len(launches)} launches")


if __name__ == "__main__":
    main()
