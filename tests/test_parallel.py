"""Seeds sharded over 8 forced CPU devices give the numbers of 1 device."""
import json
import os
import subprocess
import sys

import numpy as np


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
  np.testing.assert_allclose(np.array(eight["params"]), np.array(one["params"]),
                             rtol=1e-5, atol=1e-6)
  assert eight["ood"] == one["ood"]
