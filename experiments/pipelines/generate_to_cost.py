"""Generation to a requested cost in MBV3 and DARTS (spaces too large to list).

Run by `python -m experiments.generate_to_cost`; `run(config, workdir)` from a
notebook.

1. Training set: `train_size` architectures of the space drawn from
   `arch_distribution` (uniform by default; MBV3 may use OFA's random
   subnets), their MACs from `pnag.cost` (analytic; no table exists for
   these spaces).
2. Stage 1 (autoencoder) and stage 2 (generator), as `pnag.train` runs them,
   except that stage 2 is conditioned: each training architecture's
   condition is `search.level_features(c)` of its position c in [0, 1] on
   the log-MACs range of the training set (c = 0 at the cheapest training
   architecture, 1 at the most expensive), through the generator's AdaLN,
   the same mechanism as the accuracy condition of the NB201 search;
   `uncond_prob` of the rows train the null condition (classifier-free
   guidance). With `budget_inputs` the generator also reads, at every
   generation step, the spend so far and what remains of the request
   (`GenConfig.budget_inputs`; the condition gains the request in units of
   the training set's most expensive architecture, and the spend table is
   fitted on the training set's sub-architecture costs, `pnag.budget`).
3. Requests: the MACs at `request_quantiles` of the training set, i.e.
   values across the space's range that its architectures actually take.
   For each: `samples_per_request` samples at that condition with guidance
   `guidance`, timed after compilation; the share of samples that are valid
   and within `tolerance` (relative) of the request, and the uniqueness of
   the valid samples. Plain decoding (argmax) is the headline; the same token
   maps decoded by the space's constrained decoder are a second column.
4. Baselines, per request: rejection sampling from (a) the same generator
   under the null condition (unconditional) and (b) the training set's own
   distribution (`arch_distribution`: the uniform sampler by default; the
   uniform sampler as well where the training distribution differs),
   measured on one pool of `pool_size` draws each: the acceptance rate, the
   draws per accepted architecture (1 / rate) and the accepted
   architectures per second of sampling.

Writes workdir/results.json, results.md, config.json, metrics.jsonl and
orbax checkpoints of both stages (a rerun resumes; a changed config is
refused, `--extend` accepts more steps).
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from typing import Any

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np

from neuroprog.pnag import budget as budget_lib
from neuroprog.pnag import cost as cost_lib
from neuroprog.pnag import metrics as metrics_lib
from neuroprog.pnag import model as model_lib
from neuroprog.pnag import msq
from neuroprog.pnag import search
from neuroprog.pnag import train as pnag_train
from neuroprog.run import workdir as workdir_lib
from neuroprog.run.logs import logger
from neuroprog.run.metrics import MetricWriter

SCHEMA = pnag_train.SCHEMA.extend("generation to a requested cost", {
    "uncond_prob": 0.1,
    "guidance": 2.0,
    "request_quantiles": (0.05, 0.275, 0.5, 0.725, 0.95),
    "tolerance": 0.05,
    "samples_per_request": 1000,
    "pool_size": 4000,          # draws per rejection-sampling pool
    # Requests that settings (guidance) are chosen on: other quantiles of the
    # training MACs and another sampling key than the reported requests'.
    "validation_quantiles": (0.15, 0.385, 0.615, 0.85),
    # The generator reads the spend so far and the rest of the request at
    # every step (module doc, 2.; GenConfig.budget_inputs).
    "budget_inputs": False,
}, drop=("train_fraction", "num_samples", "decode"),
   positive_ints=("samples_per_request", "pool_size"))


# Read only after training: a trained workdir is re-evaluated with new values.
EVAL_KEYS = ("guidance", "request_quantiles", "validation_quantiles", "tolerance",
             "samples_per_request", "pool_size", "temperature")


def default_config(**values) -> ml_collections.ConfigDict:
  """A generate-to-cost ConfigDict with every key: the defaults, then `values`."""
  return SCHEMA.default_config(**values)


def _get(config, key):
  return SCHEMA.get(config, key)


def validate_config(config) -> None:
  """ValueError for unknown keys and bad values, before any work."""
  SCHEMA.validate(config)
  if _get(config, "space") not in cost_lib.SPACES:
    raise ValueError(f"config.space={config.space!r}; generation to a cost runs on "
                     f"{list(cost_lib.SPACES)} (NB201's costs are in its table).")
  if "cond_dim" in dict(_get(config, "gen")):
    raise ValueError("config.gen.cond_dim is set by the pipeline (the level features); "
                     "remove it.")
  for k in ("request_quantiles", "validation_quantiles"):
    qs = tuple(_get(config, k))
    if not qs or not all(0 <= q <= 1 for q in qs):
      raise ValueError(f"config.{k}={qs}; allowed: values in [0, 1].")
  if _get(config, "budget_inputs"):
    ae, gen = dict(_get(config, "ae")), dict(_get(config, "gen"))
    got = (_get(config, "schedule"), ae.get("scale_tokens"), gen.get("step_order"))
    if got != ("subarch", "new", "sequential"):
      raise ValueError(f"config.budget_inputs=True samples the spend so far step by step: "
                       f"it needs schedule='subarch', ae.scale_tokens='new' and "
                       f"gen.step_order='sequential', got {got}.")
  for k in ("uncond_prob", "tolerance"):
    if not 0 <= _get(config, k) < 1:
      raise ValueError(f"config.{k}={_get(config, k)!r}; allowed: [0, 1).")


class CostScale:
  """The map between MACs and the condition position c in [0, 1]:
  c = (log macs - log lo) / (log hi - log lo), lo / hi the training set's
  cheapest and most expensive architecture. request_column: the condition
  also carries macs / hi as its last entry (the budget inputs' request)."""

  def __init__(self, macs_T, request_column: bool = False):
    self.lo, self.hi = float(np.min(macs_T)), float(np.max(macs_T))
    if not self.hi > self.lo:
      raise ValueError("CostScale: every training architecture has the same cost.")
    self.request_column = bool(request_column)

  @property
  def dim(self) -> int:
    """Width of the condition vector."""
    return search.NUM_LEVEL_FEATURES + int(self.request_column)

  def units(self, macs) -> np.ndarray:
    """float32: MACs in the budget inputs' units (the most expensive
    training architecture is 1)."""
    return (np.asarray(macs, np.float64) / self.hi).astype(np.float32)

  def position(self, macs) -> np.ndarray:
    c = (np.log(np.asarray(macs, np.float64)) - np.log(self.lo)) / (
        np.log(self.hi) - np.log(self.lo))
    return c.astype(np.float32)

  def condition(self, macs) -> jax.Array:
    """float32[B, dim]: the generator's condition for requested MACs [B]."""
    feats = search.level_features(np.clip(self.position(macs), 0.0, 1.0))
    if self.request_column:
      feats = jnp.concatenate([feats, jnp.asarray(self.units(macs))[:, None]], -1)
    return feats


def _macs_of(space_name, archs) -> np.ndarray:
  """float64[B]: MACs of each architecture, nan where it is None (invalid)."""
  return np.array([np.nan if a is None else cost_lib.cost(space_name, a).macs
                   for a in archs], np.float64)


def _hits(macs_B, request, tolerance) -> np.ndarray:
  with np.errstate(invalid="ignore"):
    return np.abs(macs_B - request) <= tolerance * request


def _request_row(space, archs, request, tolerance, secs) -> dict[str, Any]:
  macs = _macs_of(space.name, archs)
  hit = _hits(macs, request, tolerance)
  m = metrics_lib.evaluate(space, archs)
  hit_archs = {space.canonical(a) for a, h in zip(archs, hit) if h}
  return {"within_tolerance": float(np.mean(hit)), "validity": m.validity,
          "uniqueness": m.uniqueness, "unique_within_tolerance": len(hit_archs),
          "median_macs": float(np.nanmedian(macs)) if m.num_valid else None,
          "median_rel_error": (float(np.nanmedian(np.abs(macs - request) / request))
                               if m.num_valid else None),
          "samples_per_s": round(len(archs) / secs, 1) if secs else None}


def _rejection(macs_pool, request, tolerance, draws_per_s):
  hit = _hits(macs_pool, request, tolerance)
  rate = float(np.mean(hit))
  return {"acceptance": rate,
          "draws_per_accepted": (1 / rate) if rate else None,
          "accepted_per_s": round(rate * draws_per_s, 2),
          "pool": int(len(macs_pool))}


def _trained(config, workdir: str, extend: bool):
  """Trains (or resumes) both stages: (model, CostScale, training MACs [T],
  stage-1 seconds, stage-2 seconds, start time)."""
  validate_config(config)
  base = ml_collections.ConfigDict({k: v for k, v in config.items()
                                    if k in pnag_train.SCHEMA.keys})
  space, ae_cfg, gen_cfg = pnag_train.build(base)
  budget = bool(_get(config, "budget_inputs"))
  gen_cfg = dataclasses.replace(gen_cfg, cond_dim=search.NUM_LEVEL_FEATURES + int(budget),
                                budget_inputs=budget)
  workdir_lib.prepare(workdir, config, step_keys=pnag_train.STEP_KEYS, extend=extend,
                      added_keys={k: SCHEMA.defaults[k] for k in ("validation_quantiles",
                                                                  "budget_inputs")},
                      eval_keys=EVAL_KEYS)
  t_start = time.time()
  train, _ = pnag_train.split(base, space)
  macs_T = _macs_of(space.name, train)
  scale = CostScale(macs_T, request_column=budget)
  ops_T, adj_T = space.encode_batch(train)
  cond_T = jnp.asarray(scale.condition(macs_T))
  uncond_prob = float(_get(config, "uncond_prob"))

  def cond_fn(key, idx):
    return cond_T[idx], jax.random.bernoulli(key, uncond_prob, idx.shape)

  logger.info("generate_to_cost %s: %d training architectures, MACs %.1fM-%.1fM",
              space.name, len(train), scale.lo / 1e6, scale.hi / 1e6)
  with MetricWriter(workdir) as writer:
    ae_state, t1 = pnag_train.train_stage1(base, ae_cfg, ops_T, adj_T, workdir, writer)
    gen_params, t2 = pnag_train.train_stage2(base, ae_cfg, gen_cfg, ae_state, ops_T, adj_T,
                                             workdir, writer, name="stage2_cost",
                                             cond_fn=cond_fn,
                                             spend_fn=lambda toks: _spend_table(
                                                 space, ae_cfg, gen_cfg, scale, ops_T, adj_T,
                                                 toks, workdir))
  ae = model_lib.autoencoder_for(ae_cfg)
  model = model_lib.PNAG(space, ae_cfg, gen_cfg, ae_state.params, ae.codebook_of(ae_state),
                         gen_params)
  return model, scale, macs_T, t1, t2, t_start


def _spend_table(space, ae_cfg, gen_cfg, scale: CostScale, ops_T, adj_T, toks_TxL,
                 workdir: str) -> np.ndarray:
  """float32 [L, K]: the budget inputs' spend table, fitted on the training
  set (`budget.fit_spend_table`): the target after each generation step is
  the MACs (in `CostScale.units`) of the sub-architecture of the step's
  scale. Writes the fit's R^2 per step to workdir/spend_fit.json."""
  t0 = time.time()
  sizes = gen_cfg.scales
  costs_TxS = budget_lib.sub_costs(space.name, ops_T, adj_T, sizes)
  # new-entry tokens (validate_config): two steps per scale, types then wiring
  step_scale = [t for t, *_ in msq.new_entry_layout(ae_cfg.node_sets,
                                                    ae_cfg.num_nodes).groups]
  targets = scale.units(costs_TxS[:, step_scale])
  fit = budget_lib.fit_spend_table(toks_TxL, targets, gen_cfg.counts, gen_cfg.codebook_size)
  info = {"r2_per_step": [round(float(r), 5) for r in fit.r2],
          "max_abs_error_final": fit.max_abs_error,
          "max_abs_error_final_macs": fit.max_abs_error * scale.hi,
          "seconds": round(time.time() - t0, 1)}
  with open(os.path.join(workdir, "spend_fit.json"), "w") as f:
    json.dump(info, f, indent=1)
  logger.info("spend table: R^2 after the last step %.5f, largest error %.2fM MACs (%.0f s)",
              fit.r2[-1], info["max_abs_error_final_macs"] / 1e6, info["seconds"])
  return fit.table


def run(config, workdir: str, *, extend: bool = False) -> dict[str, Any]:
  """The whole pipeline (module doc). Returns results.json's dict."""
  model, scale, macs_T, t1, t2, t_start = _trained(config, workdir, extend)
  space = model.space
  out = evaluate(model, config, scale, macs_T)
  out.update({"space": space.name, "num_train": len(macs_T),
              "train_macs": {"min": scale.lo, "max": scale.hi,
                             "median": float(np.median(macs_T))},
              "train_time_s": {"stage1": round(t1, 2), "stage2": round(t2, 2)},
              "wall_time_s": round(time.time() - t_start, 1)})
  with open(os.path.join(workdir, "results.json"), "w") as f:
    json.dump(out, f, indent=1)
  with open(os.path.join(workdir, "results.md"), "w") as f:
    f.write(markdown(out) + "\n")
  return out


def evaluate(model, config, scale: CostScale, macs_T) -> dict[str, Any]:
  """Per requested value: conditioned samples and both rejection baselines."""
  space = model.space
  n, pool = _get(config, "samples_per_request"), _get(config, "pool_size")
  tol, guidance = _get(config, "tolerance"), _get(config, "guidance")
  temp = _get(config, "temperature")
  requests = [float(np.quantile(macs_T, q)) for q in _get(config, "request_quantiles")]
  key = jax.random.key(_get(config, "seed") + 2000)

  compiled = set()

  def draw(k, cond, decode):
    size = n if cond is not None else pool
    kw = dict(temperature=temp, guidance=guidance if cond is not None else 1.0,
              decode=decode)
    if (size, cond is None, decode) not in compiled:   # time sampling, not compiling
      model_lib.sample(model, k, size, condition=cond, **kw)
      compiled.add((size, cond is None, decode))
    t0 = time.time()
    s = model_lib.sample(model, k, size, condition=cond, **kw)
    return s.archs, time.time() - t0

  # Rejection pools: the unconditional generator and draws from the training
  # distribution (the simple baseline a conditioned generator has to beat).
  gen_archs, gen_secs = draw(jax.random.fold_in(key, 999), None, "argmax")
  gen_macs = _macs_of(space.name, gen_archs)
  gen_valid_archs, gen_valid_secs = draw(jax.random.fold_in(key, 999), None, "valid")
  gen_valid_macs = _macs_of(space.name, gen_valid_archs)
  def pool_of(draw):   # (MACs [pool], draws per second) of a sampler's pool
    t0 = time.time()
    archs = draw(np.random.default_rng([_get(config, "seed"), 31]), pool)
    return _macs_of(space.name, archs), pool / max(time.time() - t0, 1e-9)

  base_macs, base_rate = pool_of(lambda rng, k: pnag_train.draw_archs(config, space, rng, k))
  # The uniform sampler beside it, where the training distribution differs.
  uniform_pool = (pool_of(space.sample) if _get(config, "arch_distribution") != "uniform"
                  else None)
  rows = []
  for i, request in enumerate(requests):
    cond = scale.condition(np.full((n,), request))
    k = jax.random.fold_in(key, i)
    plain, secs = draw(k, cond, "argmax")
    valid, secs_v = draw(k, cond, "valid")
    rows.append({
        "request_macs": request,
        "quantile": float(_get(config, "request_quantiles")[i]),
        "conditional": _request_row(space, plain, request, tol, secs),
        "conditional_constrained": _request_row(space, valid, request, tol, secs_v),
        "rejection_unconditional": _rejection(gen_macs, request, tol, pool / gen_secs),
        "rejection_unconditional_constrained": _rejection(gen_valid_macs, request, tol,
                                                          pool / gen_valid_secs),
        "rejection_baseline": _rejection(base_macs, request, tol, base_rate),
        **({"rejection_uniform": _rejection(uniform_pool[0], request, tol, uniform_pool[1])}
           if uniform_pool else {}),
    })
    c = rows[-1]["conditional"]
    logger.info("request %.1fM MACs: %.3f within %.0f%% (constrained %.3f), uniqueness "
                "%.3f; rejection acceptance: generator %.3f, %s draws %.3f", request / 1e6,
                c["within_tolerance"], 100 * tol,
                rows[-1]["conditional_constrained"]["within_tolerance"], c["uniqueness"],
                rows[-1]["rejection_unconditional"]["acceptance"],
                _get(config, "arch_distribution"),
                rows[-1]["rejection_baseline"]["acceptance"])
  return {"tolerance": tol, "guidance": guidance, "samples_per_request": n,
          "baseline_distribution": _get(config, "arch_distribution"), "requests": rows}


def select_guidance(config, workdir: str, guidances) -> dict[str, Any]:
  """Chooses the guidance scale on validation requests only.

  Trains or resumes both stages as `run` does, then for each guidance in
  `guidances` draws `samples_per_request` samples (plain decoding) at each of
  the `validation_quantiles` of the training MACs, with a sampling key the
  reported requests never use, and scores the share that is valid and within
  `tolerance`. The reported requests (`request_quantiles`) are not evaluated.
  Writes workdir/guidance_selection.json and .md; returns the json's dict,
  whose "chosen" is the guidance with the highest mean hit share (ties: the
  first listed).
  """
  guidances = [float(g) for g in guidances]
  if not guidances or any(g <= 0 for g in guidances):
    raise ValueError(f"guidances={guidances}; allowed: a non-empty list of positive scales.")
  model, scale, macs_T, *_ = _trained(config, workdir, False)
  n, tol = _get(config, "samples_per_request"), _get(config, "tolerance")
  quantiles = [float(q) for q in _get(config, "validation_quantiles")]
  requests = [float(np.quantile(macs_T, q)) for q in quantiles]
  key = jax.random.key(_get(config, "seed") + 3000)     # run's requests: seed + 2000
  temperature = _get(config, "temperature")
  rows = []
  for g in guidances:
    hits, unique = [], []
    for i, request in enumerate(requests):
      s = model_lib.sample(model, jax.random.fold_in(key, i), n,
                           condition=scale.condition(np.full((n,), request)),
                           temperature=temperature, guidance=g, decode="argmax")
      row = _request_row(model.space, s.archs, request, tol, None)
      hits.append(row["within_tolerance"])
      unique.append(row["uniqueness"])
    rows.append({"guidance": g, "within_tolerance": hits, "mean": float(np.mean(hits)),
                 "uniqueness": unique})
    logger.info("guidance %g: validation hits %s (mean %.3f)", g,
                " / ".join(f"{h:.3f}" for h in hits), rows[-1]["mean"])
  chosen = max(rows, key=lambda r: r["mean"])["guidance"]
  out = {"space": model.space.name, "temperature": temperature,
         "validation_quantiles": quantiles,
         "validation_requests_macs": requests, "tolerance": tol, "samples_per_request": n,
         "rows": rows, "chosen": chosen}
  with open(os.path.join(workdir, "guidance_selection.json"), "w") as f:
    json.dump(out, f, indent=1)
  lines = [f"**{out['space']}**, validation requests (training quantiles "
           f"{', '.join(f'{q:g}' for q in quantiles)}), {n} samples each, plain decoding, "
           f"temperature {temperature:g}; hits (valid and within {100 * tol:g}%), "
           "lowest uniqueness",
           "", "| guidance | " + " | ".join(f"{r / 1e6:.1f}M" for r in requests) +
           " | mean | uniqueness |", "|---" * (len(requests) + 3) + "|"]
  for r in rows:
    lines.append(f"| {r['guidance']:g}{' (chosen)' if r['guidance'] == chosen else ''} | " +
                 " | ".join(f"{100 * h:.1f}%" for h in r["within_tolerance"]) +
                 f" | {100 * r['mean']:.1f}% | {100 * min(r['uniqueness']):.1f}% |")
  with open(os.path.join(workdir, "guidance_selection.md"), "w") as f:
    f.write("\n".join(lines) + "\n")
  return out


def markdown(results) -> str:
  """results.md: one row per requested value."""
  tol = 100 * results["tolerance"]
  uniform = "rejection_uniform" in results["requests"][0]
  lines = [f"**{results['space']}**, {results['samples_per_request']} samples per request, "
           f"tolerance {tol:.0f}%, guidance {results['guidance']:g}; training MACs "
           f"{results['train_macs']['min'] / 1e6:.1f}M-{results['train_macs']['max'] / 1e6:.1f}M",
           "",
           f"| requested MACs (training quantile) | conditional: valid and within {tol:.0f}% "
           "(constrained decoder) | validity | uniqueness | median relative error | "
           "samples/s | rejection, unconditional generator: draws per accepted "
           f"(constrained) | rejection, {results['baseline_distribution']} draws: draws per "
           "accepted |" + (" rejection, uniform: draws per accepted |" if uniform else ""),
           "|---" * (9 if uniform else 8) + "|"]
  fmt = lambda v: "never accepted" if v is None else f"{v:.1f}"
  for r in results["requests"]:
    c, cv = r["conditional"], r["conditional_constrained"]
    err = "-" if c["median_rel_error"] is None else f"{100 * c['median_rel_error']:.1f}%"
    lines.append(
        f"| {r['request_macs'] / 1e6:.1f}M ({r['quantile']:g}) | {100 * c['within_tolerance']:.1f}% "
        f"({100 * cv['within_tolerance']:.1f}%) | {100 * c['validity']:.1f}% | "
        f"{100 * c['uniqueness']:.1f}% | {err} | {c['samples_per_s']} | "
        f"{fmt(r['rejection_unconditional']['draws_per_accepted'])} "
        f"({fmt(r['rejection_unconditional_constrained']['draws_per_accepted'])}) | "
        f"{fmt(r['rejection_baseline']['draws_per_accepted'])} |" +
        (f" {fmt(r['rejection_uniform']['draws_per_accepted'])} |" if uniform else ""))
  return "\n".join(lines)
