"""benchmarks/bench_tta.py's --set: an override that a model's own entry would
shadow is refused before any training, naming the path that reaches it."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(*args):
  return subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "bench_tta.py"),
                         "--task", "addmod", "--seeds", "1", *args],
                        cwd=ROOT, capture_output=True, text=True, timeout=300,
                        env={**os.environ, "PYTHONPATH": ROOT})


def test_a_config_wide_warmup_that_meta_gnn_overrides_is_refused():
  from experiments.configs import addmod  # pylint: disable=g-import-not-at-top
  warm = addmod.WARMUP_STEPS["meta_gnn"]
  r = _run("--models", "meta_gnn", "--set", "warmup_steps=500")
  assert r.returncode != 0
  assert ("grid path 'warmup_steps' does not reach meta_gnn: "
          f"config.warmup_steps_by_model.meta_gnn={warm} overrides it; name "
          "'warmup_steps_by_model.meta_gnn'") in r.stderr
  assert r.stdout == ""   # no JSON line: nothing was trained
