"""Helpers shared by the benchmark scripts: timing and the machine's matmul rate."""

import json
import platform
import sys
import time

import jax
import jax.numpy as jnp


def block(x):
  return jax.tree_util.tree_map(lambda a: a.block_until_ready(), x)


def time_call(fn, *args, min_time=1.0, warmup=1):
  """Median seconds per call of an already-jitted fn (compilation excluded)."""
  for _ in range(warmup):
    block(fn(*args))
  times = []
  start = time.perf_counter()
  while time.perf_counter() - start < min_time or len(times) < 3:
    t0 = time.perf_counter()
    block(fn(*args))
    times.append(time.perf_counter() - t0)
  times.sort()
  return times[len(times) // 2]


def matmul_gflops(n=1024, dtype=jnp.float32):
  """Measured fp32 matmul GFLOP/s of the default device (n x n x n)."""
  a = jax.random.normal(jax.random.key(0), (n, n), dtype)
  b = jax.random.normal(jax.random.key(1), (n, n), dtype)
  f = jax.jit(lambda a, b: a @ b)
  sec = time_call(f, a, b, min_time=1.0)
  return 2 * n ** 3 / sec / 1e9


def flops_of(jitted, *args):
  """FLOPs of one call from XLA's cost analysis (None if unavailable)."""
  cost = jitted.lower(*args).compile().cost_analysis()
  if isinstance(cost, (list, tuple)):
    cost = cost[0] if cost else None
  return float(cost["flops"]) if cost and "flops" in cost else None


def cpu_info():
  """The host CPU's model name and widest x86 vector extension.

  A fraction of the matmul rate depends on the host, not only on the code:
  the same Meta-GNN step read 15% of the matmul rate on a host whose 1024^3
  matmul ran at 475 GFLOP/s and 33-38% on one (AVX2) at 67-74 GFLOP/s
  (BUILD_NOTES.md, "bench_meta"), so every record names its CPU. Linux
  reads /proc/cpuinfo; elsewhere the model falls back to
  `platform.processor()` and the vector extension to None.
  """
  model, flags = None, set()
  try:
    with open("/proc/cpuinfo") as f:
      for line in f:
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "model name":
          model = value.strip()
        elif key == "flags":
          flags = set(value.split())
        if model and flags:
          break
  except OSError:
    pass
  simd = next((isa for isa in ("avx512f", "avx2", "avx", "sse4_2") if isa in flags),
              None)
  return {"cpu": model or platform.processor() or None, "cpu_simd": simd}


def machine():
  dev = jax.devices()[0]
  return {"platform": dev.platform, "device": dev.device_kind,
          "n_devices": jax.device_count(), "python": sys.version.split()[0],
          "jax": jax.__version__, "host": platform.machine(), **cpu_info()}


def emit(record):
  print(json.dumps(record), flush=True)


def held_out_samples(config_name: str, task_name: str):
  """(config, task, [(split, intents, x, y)]) for the validation and OOD
  intents of experiments/configs/<config_name>.py: the exact examples that
  `train.loop.train_model`'s evaluation scores (`loop.held_out_examples`), as
  numpy arrays x [I, n, ...], y [I, n, ...].
  Exits naming the task when the config trains another one."""
  import importlib  # pylint: disable=g-import-not-at-top
  from neuroprog.train import loop  # pylint: disable=g-import-not-at-top
  config = importlib.import_module(f"experiments.configs.{config_name}").get_config()
  if config.task != task_name:
    raise SystemExit(f"--config {config_name} trains {config.task!r}, not {task_name!r}.")
  task = loop.build_task(config)
  samples = [(split, *loop.held_out_examples(config, task, split)) for split in ("val", "ood")]
  return config, task, samples


def with_overrides(config, models_arg, overrides: str):
  """(config, models) for a benchmark's --models and --set arguments.

  models_arg: comma-separated model names, or None for the config's models;
  overrides: 'path=value;path2=value2' with paths as in experiments.select,
  one value each. A config-wide setting that a model's own entry would shadow
  is refused (`select.check_not_shadowed`), since that model's run would not
  change. Exits naming a model or override that is not allowed.
  """
  from experiments.pipelines import select  # pylint: disable=g-import-not-at-top
  models = models_arg.split(",") if models_arg else list(config.models)
  bad = sorted(set(models) - set(config.models))
  if bad:
    raise SystemExit(f"--models {bad} not in the config's {list(config.models)}.")
  if overrides:
    axes = select.parse_grid(overrides)
    if any(len(values) != 1 for _, values in axes):
      raise SystemExit(f"--set {overrides!r}: one value per path.")
    select.check_not_shadowed(config, axes, models)
    config = select.candidates(config, axes)[0][1]
  return config, models
