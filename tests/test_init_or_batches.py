"""benchmarks/init_or_batches.py: lanes start from the init seed's weights,
train on the batch seed's draws, and are read on validation intents only."""
import os
import sys

import jax
import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import init_or_batches  # pylint: disable=g-import-not-at-top,wrong-import-position

from experiments.configs import test as test_config  # pylint: disable=g-import-not-at-top,wrong-import-position
from neuroprog.train import loop  # pylint: disable=g-import-not-at-top,wrong-import-position


def _leaves(state):
  return jax.tree_util.tree_leaves(state.params)


def test_initial_state_is_the_init_seeds_start():
  config = test_config.get_config()
  task = loop.build_task(config)
  got = init_or_batches.initial_state(config, task, "meta_mlp", 3)
  config.seed = 3
  want = loop.Trainer(config, task, "meta_mlp").init()
  for a, b in zip(_leaves(got), _leaves(want)):
    np.testing.assert_array_equal(a, b)
  config.seed = 0
  other = loop.Trainer(config, task, "meta_mlp").init()
  assert max(float(np.abs(a - b).max()) for a, b in zip(_leaves(got), _leaves(other))) > 1e-3


# CI budget: a diagnostic benchmark trained end to end (20-25 s of one worker);
# its initial-state and seed checks above stay in make test. Runs in make test-slow.
@pytest.mark.slow
def test_lanes_train_and_read_validation_only(monkeypatch):
  config = test_config.get_config()
  config.steps, config.log_every = 12, 4   # three chunks, short enough for make test
  asked = []
  evaluate = loop.Trainer.evaluate
  monkeypatch.setattr(loop.Trainer, "evaluate",
                      lambda self, params, intents, key: asked.append(tuple(intents))
                      or evaluate(self, params, intents, key))
  same = init_or_batches.lanes(config, "meta_mlp", seed=0, init_seed=0, seeds=2)
  swapped = init_or_batches.lanes(config, "meta_mlp", seed=0, init_seed=5, seeds=2)
  assert asked == [(6,), (6,)]        # n = 6, the validation intent; never 4 or 8
  assert [(r["init_seed"], r["batch_seed"]) for r in swapped] == [(5, 0), (6, 1)]
  assert list(same[0]["val"]) == ["n=6"] and same[0]["val_mean"] == same[0]["val"]["n=6"]
  # With init_seed = seed a lane is that seed of a run of the config: the
  # Trainer's own result after config.steps steps.
  config.models = ("meta_mlp",)
  tr = loop.Trainer(config, loop.build_task(config), "meta_mlp")
  state, _ = tr.chunk(tr.init(), 0, config.steps)
  want = tr.evaluate(state.params, (6,), loop.split_key(config, "val"))
  np.testing.assert_allclose([r["val_mean"] for r in same], want[:, 0], atol=1e-4)
  # Other initial weights, the same batches: another result.
  assert [r["val_mean"] for r in swapped] != [r["val_mean"] for r in same]


def test_a_config_without_validation_intents_is_refused():
  config = test_config.get_config()
  config.val_intents = ()
  with pytest.raises(ValueError, match=r"no validation intents"):
    init_or_batches.lanes(config, "meta_mlp", seed=0, init_seed=1, seeds=1)
