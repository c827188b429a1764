"""Seeds sharded over 8 forced CPU devices give the numbers of 1 device."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_SCRIPT = r"""
import json, sys, jax, numpy as np
from experiments.configs import test as test_config
from neuroprog import synthesis
from neuroprog.train import loop
c = test_config.get_config()
c.update(models=("meta_mlp",), seeds=8, steps=20, checkpoint_every=20, eval_examples=32)
out = loop.train_and_evaluate(c, sys.argv[1])
*_, params, step = synthesis.load_run(sys.argv[1], "meta_mlp")
leaves = [np.asarray(a).reshape(8, -1) for a in jax.tree_util.tree_leaves(params)]
print(json.dumps({"devices": out["models"]["meta_mlp"]["devices"],
                  "n_devices": jax.device_count(),
                  "params": np.concatenate(leaves, 1).tolist(),
                  "ood": out["models"]["meta_mlp"]["ood"]}))
"""


def _run(tmp_path, n_devices):
  env = {**os.environ,
         "XLA_FLAGS": f"--xla_force_host_platform_device_count={n_devices}",
         "JAX_PLATFORMS": "cpu"}
  r = subprocess.run([sys.executable, "-c", _SCRIPT, str(tmp_path / f"d{n_devices}")],
                     cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
  assert r.returncode == 0, r.stderr[-3000:]
  return json.loads(r.stdout.strip().splitlines()[-1])


def test_eight_devices_match_one(tmp_path):
  one = _run(tmp_path, 1)
  eight = _run(tmp_path, 8)
  assert one["n_devices"] == 1 and one["devices"] == 1
  assert eight["n_devices"] == 8 and eight["devices"] == 8   # seed axis sharded 8 ways
  p8, p1 = np.array(eight["params"]), np.array(one["params"])
  # Same batches, same math; only rounding differs: XLA:CPU tiles a matmul by
  # its shape, and one seed per device is another shape than eight vmapped
  # seeds. After 20 Adam steps that leaves differences of order 1e-5 (5e-5
  # seen on one host); a wrong batch or key for a seed moves its parameters
  # by the size of the seeds' own spread, which the second assert shows is
  # three orders of magnitude larger.
  np.testing.assert_allclose(p8, p1, rtol=0, atol=2e-4)
  seed_spread = np.abs(p1[1:] - p1[:1]).max(1)
  assert seed_spread.min() > 0.1, seed_spread
  assert eight["ood"] == one["ood"]


_IMPORT_ALL = r"""
import importlib, pkgutil, jax, neuroprog
for m in pkgutil.walk_packages(neuroprog.__path__, "neuroprog."):
  importlib.import_module(m.name)
import experiments.synthesize
# Only possible while no JAX backend has started.
jax.config.update("jax_num_cpu_devices", 3)
print(jax.device_count())
"""


def test_importing_the_library_starts_no_backend():
  """Device settings (jax_num_cpu_devices, jax.distributed.initialize) must
  still be possible after `import neuroprog` and the entry points."""
  env = {**os.environ, "JAX_PLATFORMS": "cpu"}
  env.pop("XLA_FLAGS", None)
  r = subprocess.run([sys.executable, "-c", _IMPORT_ALL], cwd=ROOT, env=env,
                     capture_output=True, text=True, timeout=300)
  assert r.returncode == 0, r.stderr[-3000:]
  assert r.stdout.strip().splitlines()[-1] == "3"


# Slow (a subprocess run, about 10 s): sharding itself is checked by
# test_eight_devices_match_one in the fast suite.
@pytest.mark.slow
def test_synthesize_host_devices_flag_shards_the_seeds(tmp_path):
  env = {**os.environ, "JAX_PLATFORMS": "cpu"}
  env.pop("XLA_FLAGS", None)
  cmd = [sys.executable, "-m", "experiments.synthesize",
         "--config=experiments/configs/test.py", "--config.models=('meta_mlp',)",
         "--config.steps=10", "--host_devices=2", f"--workdir={tmp_path / 'wd'}"]
  r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
  assert r.returncode == 0, r.stderr[-3000:]
  with open(tmp_path / "wd" / "results.json") as f:
    out = json.load(f)
  assert out["models"]["meta_mlp"]["devices"] == 2     # 2 seeds, one per device
  bad = subprocess.run(cmd[:-2] + ["--host_devices=0", f"--workdir={tmp_path / 'bad'}"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
  assert bad.returncode != 0 and "host_devices" in bad.stderr
