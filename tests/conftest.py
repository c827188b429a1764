"""Shared test fixtures: small inputs per default spec, the shared data dir."""
import os
import pathlib

import jax
import jax.numpy as jnp
import pytest

import neuroprog

SHARED_DATA = pathlib.Path(
    os.environ.get("NEUROPROG_SHARED_DATA",
                   pathlib.Path(__file__).resolve().parents[1].parent / "shared" / "data"))
TASKS = ("sumfirst", "addmod", "arc1d")


def inputs_for(spec, key, n=6):
  if isinstance(spec, neuroprog.MLPSpec):
    return jax.random.normal(key, (n, spec.d_in))
  if isinstance(spec, neuroprog.TransformerSpec):
    return jax.random.randint(key, (n, spec.seq_len), 0, spec.vocab_size)
  return jax.random.randint(key, (n, min(17, spec.max_len)), 0, spec.vocab_size - 1)


def random_theta(spec, key, scale=0.3):
  """Standard init plus noise, so biases and gains are not all equal."""
  k1, k2 = jax.random.split(key)
  t = neuroprog.num_params(spec)
  return neuroprog.init_theta(spec, k1) + scale * jax.random.normal(k2, (t,))


def require_shared(sub):
  path = SHARED_DATA / sub
  if not path.exists():
    pytest.skip(f"shared data {path} is absent (it lives beside the project "
                "root as ../shared/data; set NEUROPROG_SHARED_DATA to move it)")
  return path


def tiny_addmod_config(**overrides):
  """The test config on ADDMOD: Meta-MLP of width 8, OOD 83 and 89,
  validation 53, 1 seed x 4 steps; `overrides` update it."""
  from experiments.configs import test as test_config  # pylint: disable=g-import-not-at-top
  c = test_config.get_config()
  c.update(task="addmod", models=("meta_mlp",),
           model_configs={"meta_mlp": {"hidden": 8, "depth": 1}},
           learning_rates={"meta_mlp": 1e-3}, ood_intents=("p=83", "p=89"),
           val_intents=("p=53",), seeds=1, steps=4)
  c.update(overrides)
  return c


def train_tiny_addmod(workdir: str, **overrides) -> str:
  """Trains a tiny ADDMOD workdir (`tiny_addmod_config`, evaluated on 16
  examples) for the analysis commands' tests; returns workdir."""
  from neuroprog.train import loop  # pylint: disable=g-import-not-at-top
  c = tiny_addmod_config(log_every=2, checkpoint_every=4, eval_examples=16)
  c.update(overrides)
  loop.train_and_evaluate(c, workdir)
  return workdir


# `make test` runs the modules on parallel pytest-xdist workers, one module per
# worker at a time (`--dist loadfile`). Modules are handed out in collection
# order, so the longest ones go first (measured with `--durations`, BUILD_NOTES.md
# "Test-suite time"): otherwise one worker ends alone on a long module.
_LONGEST_FIRST = ("test_meta_gnn.py", "test_train_loop.py", "test_meta.py",
                  "test_pnag_train.py", "test_pnag_autoencoder.py",
                  "test_parallel.py", "test_pnag_generator.py")


def pytest_collection_modifyitems(session, config, items):
  del session, config
  rank = {name: i for i, name in enumerate(_LONGEST_FIRST)}
  items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
