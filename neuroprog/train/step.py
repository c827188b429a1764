"""The training step: sample intents and examples, synthesize, execute, score.

Everything here is a pure function of (params, opt_state, key), so a step can
be jitted, vmapped over seeds and sharded over devices by the caller.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from neuroprog import intents as intents_lib
from neuroprog import meta
from neuroprog.programs import executor as execute_lib


class TrainState(NamedTuple):
  """params: model pytree; opt_state: optax state; step: int32[]."""
  params: dict
  opt_state: optax.OptState
  step: jax.Array


def is_direct(model) -> bool:
  """True for the direct baseline, bare or behind an example-set encoder."""
  return isinstance(model, meta.DirectModel) or bool(getattr(model, "is_direct", False))


def shots_of(model) -> int:
  """Support pairs per intent the model reads (0: label intents)."""
  return int(getattr(model, "shots", 0))


def outputs_for(model, params, u_BxF, x):
  """Target-network outputs for B intents and inputs x [B, n, ...].

  The one place the two kinds of meta-learner meet: a `meta.Hypernetwork`
  synthesizes θ float32[B, T] and each program runs through `execute`; a
  `meta.DirectModel` maps (u, x) to the outputs itself. For a model behind an
  example-set encoder (`intents.ExampleIntentModel`), u is an
  `intents.SupportSet` of B support sets instead of features.
  """
  if is_direct(model):
    return model._apply(params, u_BxF, x)   # pylint: disable=protected-access
  theta_BxT = model._apply(params, u_BxF)    # pylint: disable=protected-access
  return jax.vmap(execute_lib.execute, (None, 0, 0))(model.spec, theta_BxT, x)


def _outputs_and_labels(model, params, support, x, true_labels_BxF):
  """`outputs_for` and the model's label readout float32[B, F] in one pass
  (models with a readout: `intents.ExampleIntentModel`, `intents.InContextModel`).
  true_labels_BxF: the label features of the drawn intents (what a learner
  with the "teacher" feed reads in training; other models ignore them)."""
  if is_direct(model):
    return model.outputs_and_labels(params, support, x)
  theta_BxT, labels_BxF = model.theta_and_labels(params, support, true_labels_BxF)
  return jax.vmap(execute_lib.execute, (None, 0, 0))(model.spec, theta_BxT, x), labels_BxF


def draw(model, task, key, u_BxF, ip_BxP, n_examples: int, train: bool = False):
  """(intent input, x, y) for one batch of B intents; with train=True from
  the task's training draws (`Task.sample_train_params`), else from the
  draws evaluation reads (`Task.sample_params`).

  Label intents: u_BxF as given and n fresh examples per intent. Example
  intents: `shots` + n examples per intent from one generator call, the first
  `shots` as the support set that stands for the intent (so support and query
  share the (family, parameter) and nothing else), the rest as queries;
  u_BxF is not read. A model with twin_draws (`intents.ExampleIntentModel`)
  draws the n queries as its label-intent twin draws its examples (same key)
  and the support set with fold_in(key, 1): the same distribution, since a
  generator call draws every example independently given the intent.
  """
  shots = shots_of(model)
  sample = task.sample_train_params if train else task.sample_params
  if shots and getattr(model, "twin_draws", False):
    x, y = sample(key, ip_BxP, n_examples)
    sx, sy = sample(jax.random.fold_in(key, 1), ip_BxP, shots)
    return intents_lib.split_support(sx, sy, shots)[0], x, y
  x, y = sample(key, ip_BxP, shots + n_examples)
  if not shots:
    return u_BxF, x, y
  support, x, y = intents_lib.split_support(x, y, shots)
  return support, x, y


def make_loss_fn(model, task, n_examples: int):
  """loss_fn(params, key, u_BxF, ip_BxP) -> (mean loss, exact-match rate).

  For a model with a label readout (`intents.label_loss`, weight
  model.label_weight > 0) the loss is the task loss plus the weighted readout
  loss against u_BxF, the label features of the drawn training intents; use
  `make_objective_fn` to get the two terms apart.
  """
  objective = make_objective_fn(model, task, n_examples)

  def loss_fn(params, key, u_BxF, ip_BxP):
    total, metrics = objective(params, key, u_BxF, ip_BxP)
    return total, metrics["accuracy"]

  return loss_fn


def make_objective_fn(model, task, n_examples: int):
  """objective(params, key, u_BxF, ip_BxP) -> (objective float32[], metrics).

  metrics: {"loss": the task loss, "accuracy": exact match} and, for a model
  with a label readout, "label_loss" (unweighted). The objective is
  loss + model.label_weight * label_loss.
  """
  weight = float(getattr(model, "label_weight", 0.0))

  def objective(params, key, u_BxF, ip_BxP):
    u, x, y = draw(model, task, key, u_BxF, ip_BxP, n_examples, train=True)
    if weight:
      # u is the support set here: outputs and readout come from one
      # encoding of it (a "teacher" learner reads u_BxF instead).
      out, labels_BxF = _outputs_and_labels(model, params, u, x, u_BxF)
    else:
      out = outputs_for(model, params, u, x)
    loss = task.loss(out, y, ip_BxP).mean()
    metrics = {"loss": loss, "accuracy": task.exact_match(out, y, ip_BxP).mean()}
    if not weight:
      return loss, metrics
    metrics["label_loss"] = intents_lib.label_error(labels_BxF, u_BxF,
                                                    getattr(model, "label_units", None))
    return loss + weight * metrics["label_loss"], metrics

  return objective


# How many nearest training intents each one may be jittered towards
# (`make_grad_fn`'s intent_jitter). Nearest in standardized features, which on
# ADDMOD's primes are sometimes both on one side (5: 7 and 11).
JITTER_NEIGHBOURS = 2
MAX_INTENT_JITTER = 0.5


def intent_neighbours(feats_IxF, k: int = JITTER_NEIGHBOURS) -> np.ndarray:
  """int32[I, min(k, I - 1)]: each intent's nearest other intents, by Euclidean
  distance between features standardized per column over the I intents (a
  feature that is constant over them counts with unit scale). Host-side numpy;
  ties go to the lower index."""
  f = np.asarray(feats_IxF, np.float64)
  if f.ndim != 2 or f.shape[0] < 2:
    raise ValueError(f"intent_neighbours needs features [I, F] of at least 2 intents; "
                     f"got shape {f.shape}.")
  std = f.std(0)
  z = (f - f.mean(0)) / np.where(std > 0, std, 1.0)
  dist = ((z[:, None, :] - z[None, :, :]) ** 2).sum(-1)
  np.fill_diagonal(dist, np.inf)
  return np.argsort(dist, axis=1, kind="stable")[:, :min(k, f.shape[0] - 1)].astype(np.int32)


def jittered_features(key, feats_IxF, neighbours_IxK, idx_B, jitter: float):
  """float32[B, F]: the features of intents idx_B, each moved a fraction
  lam ~ U(0, jitter) of the way towards one of its neighbours (uniform among
  the K of neighbours_IxK). Jittable; jitter is a Python float."""
  k_nbr, k_lam = jax.random.split(key)
  pick = jax.random.randint(k_nbr, idx_B.shape, 0, neighbours_IxK.shape[1])
  other = neighbours_IxK[idx_B, pick]
  lam = jax.random.uniform(k_lam, idx_B.shape + (1,), maxval=jitter)
  return feats_IxF[idx_B] + lam * (feats_IxF[other] - feats_IxF[idx_B])


def _number_in(value, name: str, maximum: float, meaning: str) -> float:
  """value as a float; ValueError naming it unless it is a number (not a
  bool) in 0..maximum. `meaning` ends the message: what the value does."""
  if isinstance(value, bool) or not isinstance(value, (int, float)) \
      or not 0.0 <= float(value) <= maximum:
    raise ValueError(f"{name}={value!r}; allowed: a number in 0..{maximum:g} ({meaning}).")
  return float(value)


def check_intent_jitter(jitter, name: str = "intent_jitter") -> float:
  """jitter as a float; ValueError unless 0 <= jitter <= MAX_INTENT_JITTER."""
  return _number_in(jitter, name, MAX_INTENT_JITTER,
                    "the fraction of the way to a neighbouring training intent; 0: off, "
                    f"{MAX_INTENT_JITTER}: halfway, where the neighbour's own program is "
                    "as near")


MAX_INTENT_SAMPLING = 1.0


def check_intent_sampling(power, name: str = "intent_sampling") -> float:
  """power as a float; ValueError unless 0 <= power <= MAX_INTENT_SAMPLING."""
  return _number_in(power, name, MAX_INTENT_SAMPLING,
                    "training intents drawn with probability proportional to "
                    "intent_size ** power; 0: uniform, 0.5 on ADDMOD: proportional to p")


def intent_draw_probs(task, intents, power: float) -> np.ndarray | None:
  """float32[I]: each training intent's draw probability, proportional to
  task.intent_size(intent) ** power; None for power 0 (uniform draws, taken
  by `jax.random.randint` as before the option existed)."""
  power = check_intent_sampling(power)
  if not power:
    return None
  size = np.array([task.intent_size(i) for i in intents], np.float64)
  w = size ** power
  return (w / w.sum()).astype(np.float32)


def draw_intents(key, n_intents: int, n: int, probs=None) -> jax.Array:
  """int32[n]: indices of n intents drawn with replacement, uniformly
  (probs None) or with probabilities probs float32[n_intents]. Jittable."""
  if probs is None:
    return jax.random.randint(key, (n,), 0, n_intents)
  return jax.random.choice(key, n_intents, (n,), p=jnp.asarray(probs))


def make_grad_fn(model, task, *, intents_per_step: int, examples_per_intent: int,
                 train_intents=None, intent_jitter: float = 0.0,
                 intent_sampling: float = 0.0):
  """grad_fn(params, key) -> (grads, metrics): the gradient one training step takes.

  Draws `intents_per_step` training intents uniformly (with replacement) and
  `examples_per_intent` fresh examples of each from `key`; grads has the
  structure of params; metrics as `make_objective_fn`'s. Pure, not jitted.
  Factored out of `make_train_step` so that diagnostics
  (`benchmarks/grad_noise.py`) measure the very gradient a step follows.

  intent_jitter: with j > 0, the model reads each drawn intent's features
  moved a fraction U(0, j) of the way to one of its JITTER_NEIGHBOURS nearest
  training intents (`jittered_features`), while its examples and labels stay
  the drawn intent's. The program must then hold over a stretch of feature
  space around each intent, which a solution whose weights swing between
  neighbouring intents cannot do (an ADDMOD embedding at a frequency that
  grows with p) and one that varies slowly can. Label intents only: a model
  that reads example intents never sees the features.

  intent_sampling: with power a > 0, intents are drawn with probability
  proportional to task.intent_size(intent) ** a instead of uniformly
  (`intent_draw_probs`): on ADDMOD, a = 0.5 draws p = 97 48 times as often
  as p = 2, whose four pairs a uniform draw spends as many steps on.
  """
  intents = task.train_intents if train_intents is None else tuple(train_intents)
  feats = jnp.asarray(task.features(intents))
  params_all = jnp.asarray(task.intent_params(intents))
  objective = make_objective_fn(model, task, examples_per_intent)
  value_and_grad = jax.value_and_grad(objective, has_aux=True)
  jitter = check_intent_jitter(intent_jitter)
  if jitter and shots_of(model):
    raise ValueError(f"intent_jitter={jitter} moves the intent features a model reads; "
                     "this model reads example intents instead. Allowed: 0.")
  neighbours = jnp.asarray(intent_neighbours(feats)) if jitter else None
  probs = intent_draw_probs(task, intents, intent_sampling)

  def grad_fn(params, key):
    k_int, k_ex = jax.random.split(key)
    idx = draw_intents(k_int, len(intents), intents_per_step, probs)
    # The jitter's randomness is folded from k_int, so that with jitter 0 a
    # step draws exactly the batch it drew before the option existed.
    u = (jittered_features(jax.random.fold_in(k_int, 1), feats, neighbours, idx, jitter)
         if jitter else feats[idx])
    (_, metrics), grads = value_and_grad(params, k_ex, u, params_all[idx])
    return grads, metrics

  return grad_fn


def make_train_step(model, task, optimizer: optax.GradientTransformation, *,
                    intents_per_step: int, examples_per_intent: int,
                    train_intents=None, intent_jitter: float = 0.0,
                    intent_sampling: float = 0.0):
  """step(state, key) -> (state, metrics); pure, not jitted (jit/vmap it).

  Each step draws `intents_per_step` training intents uniformly (with
  replacement) and `examples_per_intent` fresh examples of each
  (`make_grad_fn`), their features jittered by intent_jitter and the draws
  weighted by intent_sampling (there).
  metrics: {"loss": float32[] (the task loss), "accuracy": float32[]} on that
  batch, and "label_loss" for a model with a label readout
  (`make_objective_fn`).
  """
  grad_fn = make_grad_fn(model, task, intents_per_step=intents_per_step,
                         examples_per_intent=examples_per_intent,
                         train_intents=train_intents, intent_jitter=intent_jitter,
                         intent_sampling=intent_sampling)

  def step(state: TrainState, key):
    grads, metrics = grad_fn(state.params, key)
    updates, opt_state = optimizer.update(grads, state.opt_state, state.params)
    params = optax.apply_updates(state.params, updates)
    return TrainState(params, opt_state, state.step + 1), metrics

  return step


def probe_intents(model, task, key, intents):
  """What a model's init calibrates on: the intents' features, or (example
  intents) one support set of each drawn with `key`."""
  feats = jnp.asarray(task.features(intents))
  if not shots_of(model):
    return feats
  ip = jnp.asarray(task.intent_params(intents))
  return draw(model, task, key, feats, ip, 0)[0]


def init_state(model, task, optimizer, key, train_intents=None) -> TrainState:
  """Model params calibrated on the training intents, fresh optimizer state."""
  intents = task.train_intents if train_intents is None else tuple(train_intents)
  probe = probe_intents(model, task, jax.random.fold_in(key, 7), intents)
  if getattr(model, "calibrates_on_labels", False):
    params = model.init(key, probe, jnp.asarray(task.features(intents)))
  else:
    params = model.init(key, probe)
  return TrainState(params, optimizer.init(params), jnp.zeros((), jnp.int32))
