"""Are two runs' results the same? (Refactors must not change numbers.)

  python benchmarks/compare_runs.py WORKDIR_A WORKDIR_B [FILE ...]

Compares WORKDIR_A/results.json with WORKDIR_B/results.json, leaving out only
timing fields (`--ignore`, default train_time_s, samples_per_s, wall_time_s;
NaN equals NaN), and each further FILE byte for byte. Prints one JSON line:
{"equal": bool, "differences": [[path, a, b], ...], "files": {FILE: bool}}
and exits 1 when anything differs.
"""

import argparse
import json
import math
import os
import sys


def differences(a, b, ignore, path=""):
  """[[path, a, b]] of the leaves where two JSON values differ."""
  if isinstance(a, dict) and isinstance(b, dict):
    out = []
    for k in sorted(set(a) | set(b)):
      if k not in ignore:
        out += differences(a.get(k), b.get(k), ignore, f"{path}/{k}")
    return out
  if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
    return [d for i, (x, y) in enumerate(zip(a, b))
            for d in differences(x, y, ignore, f"{path}[{i}]")]
  both_nan = (isinstance(a, float) and isinstance(b, float) and math.isnan(a)
              and math.isnan(b))
  return [] if a == b or both_nan else [[path, a, b]]


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("a")
  ap.add_argument("b")
  ap.add_argument("files", nargs="*")
  ap.add_argument("--ignore", default="train_time_s,samples_per_s,wall_time_s")
  args = ap.parse_args()
  ignore = set(args.ignore.split(",")) if args.ignore else set()
  with open(os.path.join(args.a, "results.json")) as f:
    ra = json.load(f)
  with open(os.path.join(args.b, "results.json")) as f:
    rb = json.load(f)
  diffs = differences(ra, rb, ignore)
  files = {}
  for name in args.files:
    with open(os.path.join(args.a, name), "rb") as fa, open(os.path.join(args.b, name), "rb") as fb:
      files[name] = fa.read() == fb.read()
  equal = not diffs and all(files.values())
  print(json.dumps({"a": args.a, "b": args.b, "equal": equal, "differences": diffs,
                    "files": files}))
  sys.exit(0 if equal else 1)


if __name__ == "__main__":
  main()
