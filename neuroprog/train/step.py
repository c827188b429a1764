"""The training step: sample intents and examples, synthesize, execute, score.

Everything here is a pure function of (params, opt_state, key), so a step can
be jitted, vmapped over seeds and sharded over devices by the caller.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

from neuroprog import meta
from neuroprog.programs import executor as execute_lib


class TrainState(NamedTuple):
  """params: model pytree; opt_state: optax state; step: int32[]."""
  params: dict
  opt_state: optax.OptState
  step: jax.Array


def outputs_for(model, params, u_BxF, x):
  """Target-network outputs for B intents and inputs x [B, n, ...].

  The one place the two kinds of meta-learner meet: a `meta.Hypernetwork`
  synthesizes θ float32[B, T] and each program runs through `execute`; a
  `meta.DirectModel` maps (u, x) to the outputs itself.
  """
  if isinstance(model, meta.DirectModel):
    return model._apply(params, u_BxF, x)   # pylint: disable=protected-access
  theta_BxT = model._apply(params, u_BxF)    # pylint: disable=protected-access
  return jax.vmap(execute_lib.execute, (None, 0, 0))(model.spec, theta_BxT, x)


def make_loss_fn(model, task, n_examples: int):
  """loss_fn(params, key, u_BxF, ip_BxP) -> (mean loss, exact-match rate)."""

  def loss_fn(params, key, u_BxF, ip_BxP):
    x, y = task.sample_params(key, ip_BxP, n_examples)
    out = outputs_for(model, params, u_BxF, x)
    return task.loss(out, y, ip_BxP).mean(), task.exact_match(out, y, ip_BxP).mean()

  return loss_fn


def make_train_step(model, task, optimizer: optax.GradientTransformation, *,
                    intents_per_step: int, examples_per_intent: int,
                    train_intents=None):
  """step(state, key) -> (state, metrics); pure, not jitted (jit/vmap it).

  Each step draws `intents_per_step` training intents uniformly (with
  replacement) and `examples_per_intent` fresh examples of each.
  metrics: {"loss": float32[], "accuracy": float32[]} on that batch.
  """
  intents = task.train_intents if train_intents is None else tuple(train_intents)
  feats = jnp.asarray(task.features(intents))
  params_all = jnp.asarray(task.intent_params(intents))
  loss_fn = make_loss_fn(model, task, examples_per_intent)
  grad_fn = jax.value_and_grad(loss_fn, has_aux=True)

  def step(state: TrainState, key):
    k_int, k_ex = jax.random.split(key)
    idx = jax.random.randint(k_int, (intents_per_step,), 0, len(intents))
    (loss, acc), grads = grad_fn(state.params, k_ex, feats[idx], params_all[idx])
    updates, opt_state = optimizer.update(grads, state.opt_state, state.params)
    params = optax.apply_updates(state.params, updates)
    return (TrainState(params, opt_state, state.step + 1),
            {"loss": loss, "accuracy": acc})

  return step


def init_state(model, task, optimizer, key, train_intents=None) -> TrainState:
  """Model params calibrated on the training intents, fresh optimizer state."""
  intents = task.train_intents if train_intents is None else tuple(train_intents)
  params = model.init(key, jnp.asarray(task.features(intents)))
  return TrainState(params, optimizer.init(params), jnp.zeros((), jnp.int32))
