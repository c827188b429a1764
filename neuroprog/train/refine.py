"""Support refinement: a synthesized program fitted to its own support pairs.

An intent given as examples carries more than a label: the pairs themselves.
After the hypernetwork has synthesized θ from a support set, a few gradient
steps on the loss of `execute(S*, θ, support x)` against support y use that
information, which a label intent does not have (test-time training of the
program, not of the meta-learner). Two things can be refined:

  "theta":  θ float32[B, T] itself, starting from the synthesized programs.
  "intent": what the hypernetwork reads (u, or the snapped label readout
            float32[B, F] with `intent_label_input`), with θ = learner(u): the
            programs stay on the hypernetwork's manifold, and an intent the
            readout names wrongly or a parameter outside training can move.

Before any step, the intent itself can be searched for (`Refinement`'s
search_families > 0; a hypernetwork that reads the snapped label readout):
the readout's best families, each with its parameter estimate and the
parameters a few steps either side (the task's `label_candidates`), are each
synthesized and scored on the support pairs, and the candidate with the most
exact support pairs (ties: the lower support loss, then the readout's order)
is what the hypernetwork reads. Recognition is then verified on the pairs
instead of trusted: a readout that names a neighbouring family, or a parameter
one step off, loses to a candidate whose program reproduces the pairs. It costs
one forward pass of the hypernetwork and of the programs on the support inputs
per candidate, no backward pass.

Every support set's rows are refined independently (the loss is a sum over
rows and Adam's update is element-wise), with the same step count and rate
for all, so a batch is one jitted `lax.scan`. The meta-learner's parameters
are constants here. Padding pairs (mask False) carry no loss.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from neuroprog.programs import executor as execute_lib

TARGETS = ("theta", "intent")
# "always": every program is refined. "support_wrong": a program that already
# maps every support input to its output exactly keeps its θ; only the others
# are refined (refining a program that fits its pairs can only move it off a
# solution the pairs cannot tell apart from another). "held_out": leave-one-out
# evidence that refinement helps on pairs it was not fitted to: for each
# present pair j of a set, the program synthesized from the other pairs is
# refined on them, and pair j is scored before and after; the refined program
# of the whole set is kept only if strictly more held-out pairs come out exact
# than without refinement, otherwise the synthesized one. A set solved before
# refinement can gain nothing, so it is kept as "support_wrong" would keep it;
# a set with one pair has no held-out evidence and is kept unrefined. It costs
# K + 1 refinements per set (K: the padded shot count), run as one batch.
GATES = ("always", "support_wrong", "held_out")
_GATE_WORDS = {"always": "", "support_wrong": " where a support pair is wrong",
               "held_out": " where refinement wins held-out support pairs (leave-one-out)"}


def describe(refinement: dict) -> str:
  """A `Refinement._asdict()` (as results.json stores it) in words, for the
  results tables: "the intent searched over the readout's 3 best families
  (parameters +-1), then 50 Adam steps on its intent at rate 0.001 where ..."."""
  words = []
  families = refinement.get("search_families", 0)
  if families:
    words.append(f"the intent searched over the readout's {families} best families "
                 f"(parameters +-{refinement.get('search_radius', 1)}) on the support pairs")
  if refinement["steps"]:
    words.append(f"{refinement['steps']} Adam steps on its {refinement['target']} at rate "
                 f"{refinement['learning_rate']:g}" +
                 _GATE_WORDS[refinement.get("gate", "always")])
  return ", then ".join(words) or "none"


class Refinement(NamedTuple):
  """steps: Adam steps per support set (0: none); learning_rate: Adam's rate;
  target: what moves (`TARGETS`); gate: which programs are refined (`GATES`);
  search_families: readout families whose candidates are verified on the
  support pairs before any step (0: no search; the task's `label_candidates`);
  search_radius: parameter steps either side of each family's estimate."""
  steps: int = 0
  learning_rate: float = 0.01
  target: str = "theta"
  gate: str = "always"
  search_families: int = 0
  search_radius: int = 1


def is_active(refinement) -> bool:
  """Whether `refinement` changes anything: steps or a search. A `Refinement`
  or its `_asdict()` as results.json stores it (older files lack the search
  keys: no search)."""
  if isinstance(refinement, dict):
    refinement = Refinement(**refinement)
  return bool(refinement.steps or refinement.search_families)


def _check_count(value, name: str, what: str) -> None:
  if isinstance(value, bool) or not isinstance(value, int) or value < 0:
    raise ValueError(f"{name}={value!r}; allowed: an int >= 0{what}.")


def check(steps, learning_rate, target, gate="always", search_families=0, search_radius=1,
          prefix: str = "refine_") -> Refinement:
  """A validated `Refinement`; ValueError naming the bad value (as prefix + the
  field, e.g. "config.refine_steps") and what is allowed."""
  _check_count(steps, f"{prefix}steps", " (0: no refinement)")
  _check_count(search_families, f"{prefix}search_families", " (0: no search)")
  _check_count(search_radius, f"{prefix}search_radius", "")
  if isinstance(learning_rate, bool) or not isinstance(learning_rate, (int, float)) \
      or not learning_rate > 0:
    raise ValueError(f"{prefix}learning_rate={learning_rate!r}; allowed: a number > 0.")
  if target not in TARGETS:
    raise ValueError(f"{prefix}target={target!r}; allowed: {list(TARGETS)}.")
  if gate not in GATES:
    raise ValueError(f"{prefix}gate={gate!r}; allowed: {list(GATES)}.")
  return Refinement(int(steps), float(learning_rate), str(target), str(gate),
                    int(search_families), int(search_radius))


def support_loss_per_set(task, spec, theta_BxT, support) -> jax.Array:
  """Mean task loss float32[B] of each program on its own support pairs.

  theta_BxT: float32[B, T]; support: an `intents.SupportSet` (x, y int32[B, K, L],
  mask bool[B, K]).
  """
  out = jax.vmap(execute_lib.execute, (None, 0, 0))(spec, theta_BxT, support.x)
  per_pair_BxK = task.loss(out, support.y, None)
  mask = support.mask.astype(jnp.float32)
  return (per_pair_BxK * mask).sum(-1) / jnp.maximum(mask.sum(-1), 1.0)


def support_solved(task, spec, theta_BxT, support) -> jax.Array:
  """bool[B]: each program maps every present support input to its output exactly."""
  return support_fit(task, spec, theta_BxT, support)[0] == support.mask.sum(-1)


def support_fit(task, spec, theta_BxT, support) -> tuple[jax.Array, jax.Array]:
  """(exact int32[B], loss float32[B]): each program's present support pairs
  mapped exactly, and its mean support loss (`support_loss_per_set`)."""
  out = jax.vmap(execute_lib.execute, (None, 0, 0))(spec, theta_BxT, support.x)
  mask_BxK = support.mask.astype(jnp.float32)
  exact_B = ((task.exact_match(out, support.y, None) > 0) & support.mask).sum(-1)
  loss_B = (task.loss(out, support.y, None) * mask_BxK).sum(-1) / jnp.maximum(
      mask_BxK.sum(-1), 1.0)
  return exact_B.astype(jnp.int32), loss_B


def can_search(model, task) -> bool:
  """True where `searched_intent` applies: a hypernetwork reading the snapped
  label readout (feeds "snapped" and "teacher") of a task with
  `label_candidates`."""
  return (can_refine(model) and getattr(model, "label_input", False)
          and getattr(model, "label_feed", None) in ("snapped", "teacher")
          and hasattr(task, "label_candidates"))


# A support set's score of a candidate: exact pairs first; the loss, capped at
# this, only breaks ties, so one more exact pair always wins.
_LOSS_CAP = 100.0


def searched_intent(model, task, params, support, refinement: Refinement):
  """(u float32[B, F], θ float32[B, T]): for each of B support sets, the
  candidate label features (`task.label_candidates` of the readout, C of them)
  whose synthesized program maps the most present support pairs exactly, ties
  to the lower support loss and then to the readout's order (candidate 0 is
  the snapped readout), and that program. The candidates run one at a time
  (a `lax.scan` over C), so memory is one batch's. Jittable (refinement static).
  """
  feats_BxF, param_BxG = model.readout_estimates(params, support)
  cands_BxCxF = jax.lax.stop_gradient(task.label_candidates(
      feats_BxF, param_BxG, refinement.search_families, refinement.search_radius))
  synthesize = lambda u: model.learner._apply(params["learner"], u)  # pylint: disable=protected-access

  def score(u_BxF):
    theta_BxT = synthesize(u_BxF)
    exact_B, loss_B = support_fit(task, model.spec, theta_BxT, support)
    return exact_B * (2 * _LOSS_CAP) - jnp.minimum(loss_B, _LOSS_CAP), theta_BxT

  def body(best, u_BxF):
    key_B, u_best, theta_best = best
    k_B, theta_BxT = score(u_BxF)
    better_B = k_B > key_B   # strict: an earlier (readout-ranked) candidate keeps a tie
    pick = lambda new, old: jnp.where(better_B[:, None], new, old)
    return (jnp.where(better_B, k_B, key_B), pick(u_BxF, u_best),
            pick(theta_BxT, theta_best)), None

  first_u = cands_BxCxF[:, 0]
  first_key, first_theta = score(first_u)
  (_, u_BxF, theta_BxT), _ = jax.lax.scan(
      body, (first_key, first_u, first_theta), jnp.swapaxes(cands_BxCxF[:, 1:], 0, 1))
  return u_BxF, theta_BxT


def _initial(model, task, params, support, refinement: Refinement):
  """(u float32[B, F], θ0 float32[B, T]): what the hypernetwork reads for each
  of B support sets (the searched intent with search_families > 0) and the
  program it synthesizes from it, before any refinement step."""
  if refinement.search_families:
    return searched_intent(model, task, params, support, refinement)
  u_BxF = model.intent_input(params, support)
  return u_BxF, model.learner._apply(params["learner"], u_BxF)  # pylint: disable=protected-access


def _synthesize_and_refine(model, task, params, support, refinement: Refinement):
  """(θ0, θ) float32[B, T]: the synthesized programs (from the searched intent
  with search_families > 0) and the same after `refinement.steps` Adam steps
  on each set's own support loss (gate ignored)."""
  synthesize = lambda u: model.learner._apply(params["learner"], u)  # pylint: disable=protected-access
  u_BxF, theta0_BxT = _initial(model, task, params, support, refinement)
  if refinement.steps == 0:
    return theta0_BxT, theta0_BxT
  if refinement.target == "theta":
    start, to_theta = theta0_BxT, lambda v: v
  else:
    start, to_theta = u_BxF, synthesize
  opt = optax.adam(refinement.learning_rate)
  # Rows are independent: each row's loss depends only on its own variables.
  total_loss = lambda v: support_loss_per_set(task, model.spec, to_theta(v), support).sum()

  def step(carry, _):
    v, opt_state = carry
    grads = jax.grad(total_loss)(v)
    updates, opt_state = opt.update(grads, opt_state, v)
    return (optax.apply_updates(v, updates), opt_state), None

  start = jax.lax.stop_gradient(start)
  (v, _), _ = jax.lax.scan(step, (start, opt.init(start)), None, length=refinement.steps)
  return theta0_BxT, to_theta(v)


def leave_one_out(support) -> tuple:
  """The K folds of B support sets as one batch of K * B sets.

  Returns (folds, held_BxK): folds is a `SupportSet` whose row j * B + b is set
  b without its pair j (mask False there; the grids are unchanged, so pair j is
  still at x[:, j], y[:, j]); held_BxK bool[B, K] marks the folds that carry
  evidence: pair j is present and at least one other pair is.
  """
  B, K = support.mask.shape
  drop_KxK = jnp.eye(K, dtype=bool)
  mask_KxBxK = support.mask[None] & ~drop_KxK[:, None, :]
  tile = lambda a: jnp.broadcast_to(a[None], (K,) + a.shape).reshape((K * B,) + a.shape[1:])
  folds = type(support)(x=tile(support.x), y=tile(support.y),
                        mask=mask_KxBxK.reshape(K * B, K))
  held_BxK = support.mask & (support.mask.sum(-1, keepdims=True) >= 2)
  return folds, held_BxK


def held_out_exact(task, spec, theta_KBxT, folds) -> jax.Array:
  """bool[B, K]: for each set b and fold j (`leave_one_out`'s row j * B + b,
  θ float32[K * B, T] of every fold), whether the fold's program maps its own
  held-out pair j exactly."""
  K = folds.mask.shape[1]
  B = folds.mask.shape[0] // K
  out = jax.vmap(execute_lib.execute, (None, 0, 0))(spec, theta_KBxT, folds.x)
  exact_KBxK = task.exact_match(out, folds.y, None) > 0
  # exact[j * B + b, j]: fold j's own held-out pair.
  return jnp.diagonal(exact_KBxK.reshape(K, B, K), axis1=0, axis2=2)


def held_out_gain(task, spec, theta0_KBxT, theta_KBxT, folds, held_BxK) -> jax.Array:
  """int32[B]: held-out pairs exact after refinement minus before, summed over
  each set's folds (`leave_one_out`'s rows, θ0 and θ of every fold)."""
  diff_BxK = (held_out_exact(task, spec, theta_KBxT, folds).astype(jnp.int32)
              - held_out_exact(task, spec, theta0_KBxT, folds))
  return jnp.where(held_BxK, diff_BxK, 0).sum(-1)


def _check_search(model, task, refinement: Refinement) -> None:
  """ValueError, before any work, for a search on a model or task without one."""
  if refinement.search_families and not can_search(model, task):
    raise ValueError(f"{getattr(model, 'name', model)}: search_families="
                     f"{refinement.search_families} searches the snapped label readout; "
                     "this model does not read one (needs label_input and the 'snapped' "
                     "or 'teacher' feed) or the task has no label_candidates. Allowed: 0.")


def refined_theta(model, task, params, support, refinement: Refinement) -> jax.Array:
  """θ float32[B, T] of `model` (an `intents.ExampleIntentModel` around a
  hypernetwork) for B support sets, after `refinement.steps` Adam steps on each
  set's own support loss, kept per set as `refinement.gate` says (`GATES`).
  Pure and jittable (refinement is static).
  """
  _check_search(model, task, refinement)
  if refinement.gate == "held_out" and refinement.steps:
    B = support.mask.shape[0]
    folds, held_BxK = leave_one_out(support)
    # The whole sets and their folds in one scan: rows are refined independently.
    both = jax.tree_util.tree_map(lambda a, f: jnp.concatenate([a, f]), support, folds)
    theta0_all, theta_all = _synthesize_and_refine(model, task, params, both, refinement)
    gain_B = held_out_gain(task, model.spec, theta0_all[B:], theta_all[B:], folds, held_BxK)
    return jnp.where((gain_B > 0)[:, None], theta_all[:B], theta0_all[:B])
  theta0_BxT, theta_BxT = _synthesize_and_refine(model, task, params, support, refinement)
  if refinement.gate != "support_wrong" or not refinement.steps:
    return theta_BxT
  keep_B = support_solved(task, model.spec, theta0_BxT, support)
  return jnp.where(keep_B[:, None], theta0_BxT, theta_BxT)


@functools.lru_cache(maxsize=32)
def jitted(model, task, refinement: Refinement):
  """`refined_theta` jitted for one (model, task, refinement): (params,
  support) -> θ float32[B, T]. Cached, so repeated calls (a notebook calling
  `neuroprog.synthesize` with new pairs, a task loop) compile once per shape."""
  return jax.jit(lambda params, support: refined_theta(model, task, params, support,
                                                       refinement))


def needs_refinement(model, task, params, support, refinement: Refinement):
  """(θ0 float32[B, T], needs bool[B]): the programs before any refinement
  step (searched as `refinement` says) and the sets whose `refined_theta` may
  differ from them. Every other set's `refined_theta` is θ0 exactly, so only
  the sets marked need the steps:

    no steps:        none.
    "always":        all.
    "support_wrong": the sets whose θ0 maps some present support pair wrongly.
    "held_out":      the sets with a held-out fold (`leave_one_out`) whose pair
                     the fold's own θ0 maps wrongly; where every held-out pair
                     is already exact, refinement cannot win one, the gain is
                     at most 0 and θ0 is kept.

  Forward passes only (the folds' θ0 for "held_out"). Pure and jittable.
  """
  _check_search(model, task, refinement)
  _, theta0_BxT = _initial(model, task, params, support, refinement)
  B = theta0_BxT.shape[0]
  if not refinement.steps:
    return theta0_BxT, jnp.zeros((B,), bool)
  if refinement.gate == "support_wrong":
    return theta0_BxT, ~support_solved(task, model.spec, theta0_BxT, support)
  if refinement.gate == "held_out":
    folds, held_BxK = leave_one_out(support)
    _, fold0_KBxT = _initial(model, task, params, folds, refinement)
    before_BxK = held_out_exact(task, model.spec, fold0_KBxT, folds)
    return theta0_BxT, (held_BxK & ~before_BxK).any(-1)
  return theta0_BxT, jnp.ones((B,), bool)


def _bucket(count: int, total: int) -> int:
  """Rows to refine for `count` needing sets of `total`: count rounded up to
  a sixteenth of total, so that a batch compiles for at most 16 sizes."""
  step = max(1, -(-total // 16))
  return min(total, -(-count // step) * step)


@functools.lru_cache(maxsize=32)
def _per_seed_stages(model, task, refinement: Refinement):
  """The jitted stages of `refined_theta_per_seed` for one (model, task,
  refinement), each mapped over a leading seed axis of the params."""
  first = jax.jit(jax.vmap(
      lambda p, s: needs_refinement(model, task, p, s, refinement), (0, None)))

  def refine_rows(params, support, idx_M):
    rows = jax.tree_util.tree_map(lambda a: a[idx_M], support)
    return refined_theta(model, task, params, rows, refinement)
  second = jax.jit(jax.vmap(refine_rows, (0, None, 0)))
  # Scatter the refined rows back; index B (out of range) marks padding, dropped.
  merge = jax.jit(jax.vmap(lambda t0, t, idx: t0.at[idx].set(t, mode="drop")))
  whole = jax.jit(jax.vmap(lambda p, s: refined_theta(model, task, p, s, refinement),
                           (0, None)))
  return first, second, merge, whole


# Seeds whose marked counts differ this much are refined one at a time: the
# rows saved must outweigh a compile per seed and the smaller batches.
_PER_SEED_SHARE = 0.75


def refined_theta_per_seed(model, task, params_S, support, refinement: Refinement,
                           per_seed=None):
  """θ float32[S, B, T]: `refined_theta` of each of S seeds' params (a leading
  axis S on every leaf) for the same B support sets, with the refinement steps
  spent only on the sets `needs_refinement` marks.

  The marked sets are gathered into one batch of S x M rows, M the largest
  count over seeds rounded up by `_bucket`; or, with per_seed (None: when the
  seeds' own rounded counts add up to at most `_PER_SEED_SHARE` of S x M), each
  seed's into its own batch, one call per seed. Each set is refined
  independently, so the result is `refined_theta`'s up to float rounding (a
  set refined inside another batch size), at a cost of forward passes plus the
  steps on the rows gathered. Not jittable: the batch sizes are read on the host.
  """
  _check_search(model, task, refinement)
  first, second, merge, whole = _per_seed_stages(model, task, refinement)
  if refinement.gate == "always" or not refinement.steps:
    return whole(params_S, support)
  theta0_SxBxT, needs_SxB = first(params_S, support)
  needs_SxB = np.asarray(needs_SxB)
  S, B = needs_SxB.shape
  rows = [np.flatnonzero(needs_SxB[s]) for s in range(S)]
  M = _bucket(max(len(r) for r in rows), B)
  if M == 0:
    return theta0_SxBxT
  own = sum(_bucket(len(r), B) for r in rows)
  if per_seed is None:
    per_seed = S > 1 and own <= _PER_SEED_SHARE * S * M
  if M == B and not per_seed:
    return whole(params_S, support)

  def gathered(sets, size):
    """(gather, scatter) int32[len(sets), size]: each seed's marked rows, padded
    (gather: row 0; scatter: B, out of range, dropped)."""
    gather = np.zeros((len(sets), size), np.int32)
    scatter = np.full((len(sets), size), B, np.int32)
    for i, r in enumerate(sets):
      gather[i, :len(r)] = r
      scatter[i, :len(r)] = r
    return gather, scatter

  if not per_seed:
    gather, scatter = gathered(rows, M)
    return merge(theta0_SxBxT, second(params_S, support, gather), scatter)
  out = []
  for s, r in enumerate(rows):
    theta0_1 = theta0_SxBxT[s:s + 1]
    if len(r):
      one = jax.tree_util.tree_map(lambda a, s=s: a[s:s + 1], params_S)
      gather, scatter = gathered([r], _bucket(len(r), B))
      theta0_1 = merge(theta0_1, second(one, support, gather), scatter)
    out.append(theta0_1)
  return jnp.concatenate(out)


def can_refine(model) -> bool:
  """True for a hypernetwork behind an example-set encoder (it emits θ and has
  support pairs to fit); label intents and the in-context model have neither."""
  return int(getattr(model, "shots", 0)) > 0 and not getattr(model, "is_direct", True)


def outputs(model, task, params, support, x, refinement: Refinement) -> jax.Array:
  """Target-network outputs for queries x [B, n, L] of B support sets, through
  θ refined on each set's support pairs (`refined_theta`)."""
  theta_BxT = refined_theta(model, task, params, support, refinement)
  return jax.vmap(execute_lib.execute, (None, 0, 0))(model.spec, theta_BxT, x)
