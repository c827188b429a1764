"""benchmarks/grad_noise.py: its statistics by value, and that it probes the
gradient a training step follows (`train.step.make_grad_fn`)."""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import grad_noise  # pylint: disable=g-import-not-at-top,wrong-import-position

from experiments.configs import test as test_config  # pylint: disable=g-import-not-at-top,wrong-import-position
from neuroprog.train import loop  # pylint: disable=g-import-not-at-top,wrong-import-position
from neuroprog.train import step as step_lib  # pylint: disable=g-import-not-at-top,wrong-import-position


def test_statistics_by_value():
  # Mean gradient G = (3, 4 | 0), |G| = 5; deviations +-(1, 0 | 1) in turn.
  grads = {"net": {"dense": {"kernel": jnp.array([[4.0, 4.0], [2.0, 4.0]])},
                   "out": {"bias": jnp.array([[1.0], [-1.0]])}}}
  s = grad_noise.gradient_statistics(grads, max_norm=5.0)
  np.testing.assert_allclose(s["norm_of_mean"], 5.0)
  np.testing.assert_allclose(s["noise_ratio"], 2.0 / 25.0)   # |e_k|^2 = 2 each
  np.testing.assert_allclose(s["mean_grad_norm"], (33 ** 0.5 + 21 ** 0.5) / 2)
  assert s["clip_fraction"] == 0.5                           # sqrt(33) > 5 > sqrt(21)
  assert list(s["module_norms"]) == ["net/dense", "net/out"]
  np.testing.assert_allclose(s["module_norms"]["net/dense"], 5.0)
  assert s["module_norms"]["net/out"] == 0.0


def test_one_gradient_is_refused_naming_the_count():
  with pytest.raises(ValueError, match=r"holds 1 gradient\(s\); the noise needs at least 2"):
    grad_noise.gradient_statistics({"w": jnp.ones((1, 3))}, 1.0)


def test_the_probed_gradient_is_the_one_a_training_step_takes():
  config = test_config.get_config()
  task = loop.build_task(config)
  model = loop.create_model(config, task, "meta_mlp")
  sgd = optax.sgd(1.0)
  kwargs = {"intents_per_step": 4, "examples_per_intent": 8}
  state = step_lib.init_state(model, task, sgd, jax.random.key(0))
  key = jax.random.key(3)
  after, _ = step_lib.make_train_step(model, task, sgd, **kwargs)(state, key)
  grads, metrics = step_lib.make_grad_fn(model, task, **kwargs)(state.params, key)
  for p0, p1, g in zip(jax.tree_util.tree_leaves(state.params),
                       jax.tree_util.tree_leaves(after.params),
                       jax.tree_util.tree_leaves(grads)):
    np.testing.assert_allclose(p0 - p1, g, rtol=1e-5, atol=1e-7)
  assert float(metrics["loss"]) > 0


def test_probe_trains_to_each_step_and_reads_its_gradient():
  config = test_config.get_config()
  task = loop.build_task(config)
  records = grad_noise.probe(config, task, "meta_mlp", [0, 20], batches=4, probe_seed=1)
  assert [r["step"] for r in records] == [0, 20]
  assert records[1]["loss"] < records[0]["loss"]
  # Step 0 by hand: seed 0's initial params, the step's gradient on the 4
  # batches fold_in(key(probe_seed), b).
  config.seeds = 1
  tr = loop.Trainer(config, task, "meta_mlp")
  params = jax.tree_util.tree_map(lambda a: a[0], tr.init().params)
  grad_fn = step_lib.make_grad_fn(tr.model, task, intents_per_step=config.intents_per_step,
                                  examples_per_intent=config.examples_per_intent)
  grads = [grad_fn(params, jax.random.fold_in(jax.random.key(1), b))[0] for b in range(4)]
  want = grad_noise.gradient_statistics(
      jax.tree_util.tree_map(lambda *g: jnp.stack(g), *grads), config.grad_clip)
  for key in ("mean_grad_norm", "norm_of_mean", "noise_ratio", "clip_fraction"):
    np.testing.assert_allclose(records[0][key], want[key], rtol=1e-3, atol=1e-4)
  assert set(records[0]["module_norms"]) == {"net/Dense_0", "net/Dense_1", "net/Dense_2",
                                             "head"}


def test_a_probe_past_the_schedule_is_refused_before_training():
  import subprocess  # pylint: disable=g-import-not-at-top
  r = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "grad_noise.py"),
                      "--task", "addmod", "--models", "meta_mlp", "--at", "0,3000",
                      "--set", "steps=2500"],
                     cwd=ROOT, capture_output=True, text=True, timeout=300,
                     env={**os.environ, "PYTHONPATH": ROOT})
  assert r.returncode != 0
  assert "--at 3000 is past the config's 2500 steps." in r.stderr
  assert r.stdout == ""
