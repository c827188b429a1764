"""Wall time of loading the NAS-Bench-201 CSV table (parse, validate, encode).

Prints one JSON line: median seconds over `--repeats` cold loads of the table
(each builds the 15,625 canonical strings, encodings and accuracy arrays).
Target (the conditional-PNAG issue): under one second.

  python benchmarks/bench_nb201_load.py [--path ../shared/data/nas-bench-201/nb201_hp12_accuracy.csv]
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # pylint: disable=g-import-not-at-top,wrong-import-position

from neuroprog.pnag import data  # pylint: disable=g-import-not-at-top,wrong-import-position


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--path", default=None, help="CSV table; default: the shared one.")
  ap.add_argument("--repeats", type=int, default=5)
  args = ap.parse_args()
  path = args.path or data.default_csv()
  if path is None:   # a user's clone has no ../shared: say so, do not fail `make bench`
    common.emit({"bench": "nb201_load", "skipped": "no table: the shared CSV is absent; "
                 "pass --path", **common.machine()})
    return
  times = []
  for _ in range(args.repeats):
    t0 = time.perf_counter()
    table = data.load_nb201(path)
    times.append(time.perf_counter() - t0)
  times.sort()
  common.emit({"bench": "nb201_load", "rows": len(table), "repeats": args.repeats,
               "median_s": round(times[len(times) // 2], 4), "min_s": round(times[0], 4),
               "target_s": 1.0, **common.machine()})


if __name__ == "__main__":
  main()
