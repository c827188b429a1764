"""Conditional PNAG on NAS-Bench-201: the pieces of surrogate-guided search.

The generator is conditioned on [level features; task context]: a target
accuracy level (a percentile in [0, 1], `level_features`) and the surrogate's
set encoding of a support set of the target dataset (`surrogate.Surrogate.
context`). Training conditions come from `make_cond_fn` (percentiles of the
training datasets' validation accuracies, and a bank of contexts of random
support sets, `context_bank`). `search` generates candidates at a level,
ranks the valid unique ones with the surrogate and looks the best up;
`control_curve` measures how the samples' accuracy follows the level.

Baselines a search must beat, on the same table, target and support set
(`zero_shot_transfer`, `random_search`, `surrogate_search`): each returns the
same dict as `search`, with the number of target evaluations it used. Every
function reads the target's validation accuracies only at the cells it
evaluates (the support set and its look-ups) and its test accuracies only to
report the pick.

The whole leave-one-dataset-out experiment is `experiments/search.py`.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from neuroprog.pnag import data
from neuroprog.pnag import model as model_lib
from neuroprog.pnag import surrogate as sur_lib
from neuroprog.run.logs import logger

NUM_LEVEL_FEATURES = 8


def level_features(level_B) -> jax.Array:
  """float32 [B, 8] features of target levels in [0, 1] (percentiles):
  [l, l^2, cos(pi k l), sin(pi k l) for k = 1..3]."""
  lv = jnp.asarray(level_B, jnp.float32)
  k = jnp.arange(1, 4, dtype=jnp.float32)
  return jnp.concatenate([lv[:, None], lv[:, None] ** 2, jnp.cos(jnp.pi * k * lv[:, None]),
                          jnp.sin(jnp.pi * k * lv[:, None])], -1)


def condition(level_B, context_BxC) -> jax.Array:
  """float32 [B, 8 + context_dim]: the generator's condition vector."""
  return jnp.concatenate([level_features(level_B), jnp.asarray(context_BxC, jnp.float32)], -1)


def percentiles(acc_M) -> np.ndarray:
  """float32 [M] in [0, 1]: the rank of each accuracy (ties averaged) / (M-1)."""
  from scipy import stats  # pylint: disable=g-import-not-at-top
  return ((stats.rankdata(acc_M) - 1) / (len(acc_M) - 1)).astype(np.float32)


def top_fraction(acc_M, value) -> float:
  """Rank of `value` among the table's accuracies, as a share: 1 + #(better)
  over M. <= 0.01 means within the top 1%."""
  return float((1 + np.sum(np.asarray(acc_M) > value)) / len(acc_M))


def context_bank(sur: sur_lib.Surrogate, ops, adj, acc_DxM, count: int, seed: int):
  """float32 [D, count, context_dim]: contexts of random support sets per task."""
  rng = np.random.default_rng([seed, 11])
  s = sur.cfg.support_size
  out = []
  for acc in acc_DxM:
    row = []
    for _ in range(count):
      idx = sur_lib.support_indices(rng, len(acc), s)
      row.append(np.asarray(sur.context(ops[idx], adj[idx], acc[idx])))
    out.append(np.stack(row))
  return np.stack(out).astype(np.float32)


def make_cond_fn(pct_DxM, bank_DxRxC, uncond_prob):
  """The stage-2 condition sampler: f(key, idx[B]) -> (cond [B, cond_dim], drop [B])."""
  pct, bank = jnp.asarray(pct_DxM), jnp.asarray(bank_DxRxC)

  def cond_fn(key, idx):
    kd, kr, kn = jax.random.split(key, 3)
    b = idx.shape[0]
    d = jax.random.randint(kd, (b,), 0, pct.shape[0])
    r = jax.random.randint(kr, (b,), 0, bank.shape[1])
    return condition(pct[d, idx], bank[d, r]), jax.random.bernoulli(kn, uncond_prob, (b,))
  return cond_fn


def _report(table, target, best, evaluated, counts) -> dict[str, Any]:
  """The pick `best` (a cell index) with its target accuracies and rank;
  `evaluated`: the cells whose target validation accuracy the method read."""
  val, test = table.accuracy(target, "val"), table.accuracy(target, "test")
  return {"arch": table.archs[best], "index": int(best), "test_accuracy": float(test[best]),
          "val_accuracy": float(val[best]), "top_fraction": top_fraction(test, test[best]),
          "evaluated": sorted(int(i) for i in set(np.asarray(evaluated).tolist())),
          **counts}


def _keep_best_val(table, target, looked_up) -> int:
  """The looked-up cell with the best target validation accuracy (first on ties)."""
  val = table.accuracy(target, "val")
  looked_up = np.asarray(looked_up)
  return int(looked_up[np.argmax(val[looked_up])])


def zero_shot_transfer(table: data.NB201Table, target: str,
                       sources: Optional[Sequence[str]] = None) -> dict[str, Any]:
  """Baseline (a): the cell with the highest summed validation percentile
  over the source datasets (default: all but `target`). No target evaluation.
  Ties break to the lower index."""
  sources = [d for d in (sources or table.datasets) if d != target]
  if not sources:
    raise ValueError(f"zero_shot_transfer: no source dataset besides {target!r}.")
  total = np.sum([percentiles(table.accuracy(d, "val")) for d in sources], 0)
  return _report(table, target, int(np.argmax(total)), [],
                 {"lookups": 0, "support_evaluations": 0, "evaluations": 0})


def random_search(table: data.NB201Table, target: str, support_idx, lookups: int,
                  rng: np.random.Generator) -> dict[str, Any]:
  """Baseline (b): the support cells (uniform draws, already evaluated) plus
  `lookups` more distinct uniform draws; the best validation accuracy among
  all of them. Same number of target evaluations as `search`."""
  support_idx = np.asarray(support_idx)
  rest = np.setdiff1d(np.arange(len(table)), support_idx)
  extra = rng.choice(rest, lookups, replace=False)
  evaluated = np.concatenate([support_idx, extra])
  return _report(table, target, _keep_best_val(table, target, evaluated), evaluated,
                 {"lookups": int(lookups), "support_evaluations": int(len(support_idx)),
                  "evaluations": int(len(evaluated))})


def surrogate_search(sur: sur_lib.Surrogate, table: data.NB201Table, target: str,
                     support_idx, lookups: int) -> dict[str, Any]:
  """Baseline (c): the surrogate, given the support set's context, ranks
  every enumerated cell; the top `lookups` are looked up and the best
  validation accuracy among them kept (`search` without the generator)."""
  ops, adj = table.encodings
  val = table.accuracy(target, "val")
  ctx = sur.context(ops[support_idx], adj[support_idx], val[support_idx])
  scores = sur.score(ops, adj, ctx)
  picked = np.argsort(-scores, kind="stable")[:lookups]
  return _report(table, target, _keep_best_val(table, target, picked),
                 np.concatenate([support_idx, picked]),
                 {"lookups": int(lookups), "support_evaluations": int(len(support_idx)),
                  "evaluations": int(len(support_idx) + lookups)})


def search(model: model_lib.PNAG, sur: sur_lib.Surrogate, table: data.NB201Table,
           target: str, support_idx, key, *, level: float, num_candidates: int,
           lookups: int, guidance: float, temperature: float = 1.0) -> dict[str, Any]:
  """One search on `target`: generate, rank with the surrogate, look up m.

  Returns the chosen cell, its test accuracy and rank share, and counts.
  """
  ops, adj = table.encodings
  val = table.accuracy(target, "val")
  ctx = sur.context(ops[support_idx], adj[support_idx], val[support_idx])
  cond = condition(jnp.full((num_candidates,), level), jnp.broadcast_to(
      ctx, (num_candidates, ctx.shape[-1])))
  # Plain decoding: an invalid sample is an honest miss of the generator, and
  # the constrained decoder would hide how well the condition steers it.
  s = model_lib.sample(model, key, num_candidates, condition=cond, guidance=guidance,
                       temperature=temperature, decode="argmax")
  cands = sorted({table.index_of(a) for a in s.archs if a is not None})
  counts = {"valid": float(np.mean(s.valid)), "unique_valid": int(len(cands)),
            "lookups": int(lookups), "support_evaluations": int(len(support_idx)),
            "evaluations": int(len(support_idx) + lookups)}
  if not cands:   # an undertrained generator: a failed search, not an exception
    logger.warning("search on %s: no valid sample among %d candidates.", target,
                   num_candidates)
    return {"arch": None, "index": None, "test_accuracy": None, "val_accuracy": None,
            "top_fraction": None, "evaluated": sorted(int(i) for i in support_idx), **counts}
  cands = np.array(cands)
  scores = sur.score(ops[cands], adj[cands], ctx)
  picked = cands[np.argsort(-scores, kind="stable")[:lookups]]
  # The user keeps the best validation accuracy among the look-ups.
  return _report(table, target, _keep_best_val(table, target, picked),
                 np.concatenate([np.asarray(support_idx), picked]), counts)


def control_curve(model, sur, table, target, support_idx, key, *, levels, n, guidance,
                  temperature=1.0):
  """Mean test accuracy (and validity) of n samples at each target level."""
  ops, adj = table.encodings
  val, test = table.accuracy(target, "val"), table.accuracy(target, "test")
  ctx = sur.context(ops[support_idx], adj[support_idx], val[support_idx])
  out = []
  for i, lv in enumerate(levels):
    cond = condition(jnp.full((n,), lv), jnp.broadcast_to(ctx, (n, ctx.shape[-1])))
    s = model_lib.sample(model, jax.random.fold_in(key, i), n, condition=cond,
                         guidance=guidance, temperature=temperature, decode="argmax")
    idx = [table.index_of(a) for a in s.archs if a is not None]
    out.append({"level": float(lv), "valid": float(np.mean(s.valid)),
                "mean_test_accuracy": float(np.mean(test[idx])) if idx else float("nan")})
  return out
