"""Cost of training many seeds in one program: wall time of S seeds over 1.

For each model of the SUMFIRST default config, times a compiled 100-step
chunk with 1 seed and with 10 seeds (vmap over the seed axis, sharded when
several devices exist), compilation excluded, keeping the fastest of
--repeats calls, and prints one JSON line per model with the ratio (target:
at most 4x on the 2-core CPU).

  python benchmarks/bench_seeds.py [--seeds 10] [--steps 100] [--models meta_gnn]
      [--host_devices 2]

--host_devices N splits the CPU into N XLA devices
(`--xla_force_host_platform_device_count`), so the seed axis is sharded over
them as on N accelerators; the 1-seed program still runs on one device.

--job times the whole job instead, as a user runs it: `python -m
experiments.synthesize` on the SUMFIRST default config (all its models and
steps, compilation, evaluation and checkpoints included) with 1 seed and with
--seeds seeds, each in a fresh process, and prints one JSON line with both
wall times and their ratio. With --host_devices the many-seed job runs on
that many host devices and the 1-seed job on the undivided CPU.

  python benchmarks/bench_seeds.py --job [--host_devices 2] [--job_steps 6000]
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _positive_int(text):
  if not text.isdigit() or int(text) < 1:
    raise argparse.ArgumentTypeError(f"{text!r}; allowed: a positive integer")
  return int(text)


def chunk_seconds(config, task, name, steps, repeats):
  import jax  # pylint: disable=g-import-not-at-top  (after main set XLA_FLAGS)
  from neuroprog.train import loop  # pylint: disable=g-import-not-at-top
  tr = loop.Trainer(config, task, name)
  state = tr.init()
  run = lambda state, start: tr.chunk(state, start, steps)
  jax.block_until_ready(run(state, 0))          # compile
  best = float("inf")
  for r in range(repeats):   # this shared VM's speed moves: keep the fastest call
    t0 = time.perf_counter()
    jax.block_until_ready(run(state, (r + 1) * steps))
    best = min(best, time.perf_counter() - t0)
  return best


def job_seconds(seeds, host_devices, steps, workdir):
  """Wall seconds of `experiments.synthesize` on the SUMFIRST config, in a
  fresh process (so XLA_FLAGS take effect), with `seeds` seeds."""
  env = dict(os.environ)
  if host_devices:
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") +
                        f" --xla_force_host_platform_device_count={host_devices}")
  cmd = [sys.executable, "-m", "experiments.synthesize",
         "--config=experiments/configs/sumfirst.py", f"--config.seeds={seeds}",
         f"--workdir={workdir}"]
  if steps:
    cmd.append(f"--config.steps={steps}")
  t0 = time.perf_counter()
  proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
  seconds = time.perf_counter() - t0
  if proc.returncode != 0:
    raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")
  return seconds


def run_job(args):
  sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
  import common  # pylint: disable=g-import-not-at-top  (the jobs run in their own processes)
  times = {}
  with tempfile.TemporaryDirectory() as tmp:
    for s, devices in ((1, None), (args.seeds, args.host_devices)):
      times[s] = job_seconds(s, devices, args.job_steps, os.path.join(tmp, f"seeds{s}"))
  print(json.dumps({
      "bench": "seeds_job", "task": "sumfirst", "steps": args.job_steps or "config",
      "seconds_1_seed": round(times[1], 1),
      f"seconds_{args.seeds}_seeds": round(times[args.seeds], 1),
      "ratio": round(times[args.seeds] / times[1], 2),
      "host_devices_many_seeds": args.host_devices or 1,
      "python": sys.version.split()[0], "host": platform.machine(),
      **common.cpu_info()}), flush=True)


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--seeds", type=int, default=10)
  ap.add_argument("--steps", type=int, default=100)
  ap.add_argument("--models", default="meta_gnn,meta_mlp,meta_gmlp,direct")
  ap.add_argument("--repeats", type=int, default=3,
                  help="timed calls per program; the fastest counts")
  ap.add_argument("--host_devices", type=_positive_int, default=None,
                  help="split the CPU into this many XLA devices (read before JAX starts)")
  ap.add_argument("--job", action="store_true",
                  help="time the whole SUMFIRST job (1 vs --seeds seeds) instead of a chunk")
  ap.add_argument("--job_steps", type=_positive_int, default=None,
                  help="with --job: training steps (default: the config's)")
  args = ap.parse_args()
  if args.job:
    run_job(args)
    return
  if args.host_devices:   # XLA reads its flags when JAX starts, so before the imports
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               f" --xla_force_host_platform_device_count={args.host_devices}")
  sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
  sys.path.insert(0, ROOT)
  # pylint: disable=g-import-not-at-top
  import common
  from experiments.configs import sumfirst
  from neuroprog.train import loop
  for name in args.models.split(","):
    times = {}
    for s in (1, args.seeds):
      config = sumfirst.get_config()
      config.seeds = s
      task = loop.build_task(config)
      times[s] = chunk_seconds(config, task, name, args.steps, args.repeats)
    common.emit({"bench": "seeds", "task": "sumfirst", "model": name,
                 "steps": args.steps, "repeats": args.repeats, "seconds_1_seed": round(times[1], 3),
                 f"seconds_{args.seeds}_seeds": round(times[args.seeds], 3),
                 "ratio": round(times[args.seeds] / times[1], 2),
                 "examples_per_s_per_seed": round(
                     args.steps * config.intents_per_step *
                     config.examples_per_intent / times[1]),
                 **common.machine()})


if __name__ == "__main__":
  main()
