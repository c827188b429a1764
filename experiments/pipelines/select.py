"""Choosing settings on validation intents only.

Run by `python -m experiments.select`. `run(config, grid, workdir)` trains
every candidate setting of `grid` (the cartesian product of its values) on the
config's training intents, evaluates each trained model on the training (ID)
and validation intents only, and writes the table it chose from:
workdir/selection.json and selection.md, one row per (candidate, model), and
per model the candidate with the best score (mean over seeds; ties: the first
candidate). The score is the validation accuracy (`score="val"`, the default)
or the mean of the training-intent (ID) and validation accuracies
(`score="id+val"`): for settings that can lose what a model already does
well (a refinement that moves programs which were right), the ID intents,
where most programs are right, show that cost, and the validation intents
show the gain where they are not. The OOD intents are never evaluated: models are
trained and scored through `train.loop.train_model(..., splits=("id", "val"))`,
and the config must name validation intents.

With `trained` (a finished workdir of the same config), the grid may name only
evaluation keys (`train.loop.REFINE_KEYS`: the support refinement of example
intents): nothing is trained; each candidate re-scores the trained checkpoints
on the validation intents (and on the ID intents when the score reads them;
the ID column is "-" otherwise), so settings that act after training are
chosen on the same models and the same rule.

The setting as configured is a row of the table too (`configured`, by
default with `trained`, where it costs one re-scoring; in training mode only
when asked, since it costs a training): a grid candidate equal to the config
is marked as it, otherwise one candidate with no overrides is added last. A
tie with it keeps the configured setting, so a change needs a better score.

Grid syntax: `path=v1,v2;path2=w1,w2`, and grids joined by `|` for their
union (`refine_steps=0 | refine_steps=50;refine_learning_rate=1e-3,3e-3`), where a path names a config key, with
dots into dict-valued keys (`learning_rates.meta_gnn`,
`model_configs.meta_gnn.pe_random`) and values are Python literals (strings
otherwise), e.g. `model_configs.meta_gnn.pe_features=ramp,sincos+ramp`.
"""

import ast
import copy
import itertools
import json
import os
from typing import Any, Sequence

import ml_collections
import numpy as np

from neuroprog import meta
from neuroprog.run import workdir as workdir_lib
from neuroprog.run.metrics import MetricWriter
from neuroprog.train import loop


def parse_grid(text: str) -> list[tuple[str, list]]:
  """[(path, [values])] from `path=v1,v2;path2=w1`; ValueError names a bad part."""
  axes = []
  for part in [p.strip() for p in text.split(";") if p.strip()]:
    path, sep, values = part.partition("=")
    path = path.strip()
    if not sep or not path or not values.strip():
      raise ValueError(f"grid part {part!r}: expected path=value1,value2,...")
    parsed = []
    for v in values.split(","):
      v = v.strip()
      try:
        parsed.append(ast.literal_eval(v))
      except (ValueError, SyntaxError):
        parsed.append(v)
    axes.append((path, parsed))
  if not axes:
    raise ValueError(f"grid {text!r} names no setting.")
  paths = [p for p, _ in axes]
  if len(set(paths)) != len(paths):
    raise ValueError(f"grid {text!r} names a path twice.")
  return axes


def _set(config: dict, path: str, value) -> None:
  keys = path.split(".")
  if keys[0] not in loop.SCHEMA.keys:
    raise ValueError(f"grid path {path!r}: {keys[0]!r} is not a config key; allowed: "
                     f"{sorted(loop.SCHEMA.keys)}.")
  node = config
  for k in keys[:-1]:
    node = node.setdefault(k, {})
    if not isinstance(node, dict):
      raise ValueError(f"grid path {path!r}: {k!r} does not hold a dict.")
  node[keys[-1]] = value


def parse_grids(text: str) -> list[list[tuple[str, list]]]:
  """`parse_grid` of each `|`-separated part: their union is the candidates."""
  return [parse_grid(part) for part in text.split("|")]


def all_axes(grids) -> list[tuple[str, list]]:
  """One axis per path named in any of the grids, values in order of first use."""
  out: dict[str, list] = {}
  for axes in grids:
    for path, values in axes:
      out.setdefault(path, [])
      out[path] += [v for v in values if v not in out[path]]
  return list(out.items())


def candidates(config, axes, rematch: bool = True) -> list[tuple[dict, ml_collections.ConfigDict]]:
  """[(overrides {path: value}, config)] for every point of the grid.

  rematch: where an override changes a model's parameter count (grouping,
  positional features, rounds, ...) and the grid does not set its width, the
  width is re-matched (`meta.match_capacity`, within 10%) to the model's
  parameter count under `config`, so that candidates compete at equal
  capacity; the width used is recorded in the candidate's config.
  """
  base = config.to_dict() if hasattr(config, "to_dict") else dict(config)
  out = []
  for values in itertools.product(*[v for _, v in axes]):
    overrides = dict(zip([p for p, _ in axes], values))
    c = copy.deepcopy(base)
    for path, value in overrides.items():
      _set(c, path, value)
    cfg = ml_collections.ConfigDict(c)
    loop.validate_config(cfg)
    task = loop.build_task(cfg)        # bad intents or model options fail before any training
    if rematch:
      _rematch(cfg, config, task, overrides)
    for name in cfg.models:
      loop.create_model(cfg, task, name)
    out.append((overrides, cfg))
  return out


def _rematch(cfg, base_config, task, overrides) -> None:
  """Re-matches, in place, the width of each model whose parameter count the
  overrides changed (see `candidates`)."""
  for name in cfg.models:
    if not any(p.startswith(f"model_configs.{name}.") for p in overrides):
      continue
    key = meta.width_key(meta.base_name(name), task.spec)
    if f"model_configs.{name}.{key}" in overrides:
      continue
    budget = loop.create_model(base_config, task, name).num_params()
    if loop.create_model(cfg, task, name).num_params() == budget:
      continue
    own = dict(cfg.model_configs.get(name, {}) or {})
    own.pop("num_params", None)
    own.pop(key, None)
    matched = meta.match_capacity([name], task.spec, budget, intent_dim=task.feature_dim,
                                  base_configs={name: own})[name]
    if name not in cfg.model_configs:
      cfg.model_configs[name] = {}
    cfg.model_configs[name][key] = matched[key]


def _check_trained(config, axes, trained: str) -> None:
  """ValueError unless every grid path is an evaluation key and `trained`
  holds a run of `config` (evaluation keys aside)."""
  bad = [p for p, _ in axes if p.split(".")[0] not in loop.REFINE_KEYS]
  if bad:
    raise ValueError(f"grid paths {bad} change training; with a trained workdir the grid "
                     f"may name only evaluation keys {list(loop.REFINE_KEYS)}.")
  changes = workdir_lib.differences(trained, config, added_keys=loop.ADDED_KEYS,
                                    eval_keys=loop.REFINE_KEYS,
                                    fill_stored=loop.fill_added_options)
  if changes:
    raise ValueError(f"{trained} holds a run of another config "
                     f"({workdir_lib.describe(changes)}); pass the config it was trained with.")


# Config-wide keys a model's own entry overrides: {key: per-model dict key}.
PER_MODEL_KEYS = {"learning_rate": "learning_rates", "warmup_steps": "warmup_steps_by_model",
                  "optimizer": "optimizer_by_model", "intent_jitter": "intent_jitter_by_model",
                  "intent_sampling": "intent_sampling_by_model",
                  "intents_per_step": "intents_per_step_by_model",
                  "examples_per_intent": "examples_per_intent_by_model"}


def check_not_shadowed(config, axes, models) -> None:
  """ValueError if a grid path would be overridden, for one of `models`, by
  that model's own value (the candidates would then all score the same for
  it): `refine_<field>` by config.refine_by_model[name][field], and the keys of
  PER_MODEL_KEYS by config.learning_rates[name] / warmup_steps_by_model[name] /
  optimizer_by_model[name] / intent_jitter_by_model[name] /
  intent_sampling_by_model[name] / intents_per_step_by_model[name] /
  examples_per_intent_by_model[name]."""
  by_model = config.get("refine_by_model") or {}
  for path, _ in axes:
    field = path[len("refine_"):] if path.startswith("refine_") else None
    for name in models:
      own = by_model.get(name) or {}
      if field in own:
        raise ValueError(f"grid path {path!r} does not reach {name}: "
                         f"config.refine_by_model.{name}.{field}={own[field]!r} overrides it; "
                         f"name 'refine_by_model.{name}.{field}' in the grid instead.")
      if path in PER_MODEL_KEYS:
        per_model = PER_MODEL_KEYS[path]
        own = config.get(per_model) or {}
        if name in own:
          raise ValueError(f"grid path {path!r} does not reach {name}: "
                           f"config.{per_model}.{name}={own[name]!r} overrides it; "
                           f"name '{per_model}.{name}' in the grid instead.")


SCORES = ("val", "id+val")


def fill_stored_select(stored: dict) -> dict:
  """A select workdir's stored JSON dict with the run config's keys and model
  options added since filled with what they were before (`loop.ADDED_KEYS`,
  `loop.fill_added_options`), so a select started before an option existed
  resumes under the same grid."""
  config = stored.get("config")
  if isinstance(config, dict):
    for key, default in loop.ADDED_KEYS.items():
      config.setdefault(key, json.loads(workdir_lib.config_json({key: default}))[key])
    loop.fill_added_options(config)
  return stored


def run(config, grid: str, workdir: str, models: Sequence[str] = (),
        trained: str | None = None, score: str = "val",
        configured: bool | None = None) -> dict[str, Any]:
  """Trains each candidate (resumable, one sub-workdir each) and chooses on
  validation; returns selection.json's dict.

  models: the config's models to train and choose for (default: all).
  trained: a finished workdir of `config`; then the grid names evaluation keys
    only and each candidate re-scores its checkpoints instead of training.
  score: what is maximised (`SCORES`): "val" or "id+val" (module docstring).
  configured: whether the setting as configured is a row (module docstring);
    None: with `trained` only.
  """
  if score not in SCORES:
    raise ValueError(f"score={score!r}; allowed: {list(SCORES)}.")
  loop.validate_config(config)
  task = loop.build_task(config)
  if not task.val_intents:
    raise ValueError("selection needs validation intents: set config.val_intents "
                     "(held out of training and disjoint from the OOD intents).")
  models = list(models) or list(config.models)
  unknown = sorted(set(models) - set(config.models))
  if unknown:
    raise ValueError(f"models {unknown} are not in config.models {list(config.models)}.")
  grids = parse_grids(grid)
  axes = all_axes(grids)
  check_not_shadowed(config, axes, models)
  if trained:
    _check_trained(config, axes, trained)
  cands = [c for part in grids for c in candidates(config, part, rematch=not trained)]
  as_configured = _configured_index(config, cands)
  if as_configured is None and (bool(trained) if configured is None else configured):
    cands += candidates(config, [])
    as_configured = len(cands) - 1
  for _, cfg in cands:
    cfg.models = tuple(models)
  workdir_lib.prepare(workdir, {"config": json.loads(workdir_lib.config_json(config)),
                                "grid": grid, "models": models,
                                **({"score": score} if score != "val" else {}),
                                **({"trained": os.path.abspath(trained)} if trained else {})},
                      step_keys=(), fill_stored=fill_stored_select)
  # The task's one-line baselines on the validation examples (never OOD), so
  # that the table chosen from shows what needs no training.
  baselines = {name: h["val_mean"] for name, h in
               loop.evaluate_heuristics(config, task, splits=("val",)).items()}
  rows = []
  for i, (overrides, cfg) in enumerate(cands):
    sub = os.path.join(workdir, f"candidate_{i:02d}")
    workdir_lib.prepare(sub, cfg, added_keys=loop.ADDED_KEYS,
                        fill_stored=loop.fill_added_options)
    task_i = loop.build_task(cfg)
    with MetricWriter(sub) as writer:
      for name in models:
        if trained:
          # The ID intents only when the score reads them: re-scoring there
          # costs about ten times the validation intents (22 intents against
          # 2 on 1D-ARC, and refinement runs the backward pass per step).
          r = loop.evaluate_trained(cfg, task_i, name, trained,
                                    splits=("id", "val") if score == "id+val" else ("val",))
        else:
          r = loop.train_model(cfg, task_i, name, sub, writer, splits=("id", "val"))
        rows.append({"candidate": i, "overrides": overrides, "model": name,
                     "num_params": r["num_params"], "seeds": r["seeds"], "steps": r["steps"],
                     "id_mean": r["id_mean"], "id": r.get("id", {}),
                     "val_mean": r["val_mean"], "val": r["val"],
                     "val_score": float(np.mean(r["val_mean"])),
                     "val_std": float(np.std(r["val_mean"])),
                     "id_score": float(np.mean(r["id_mean"])) if r["id_mean"] else None,
                     "configured": i == as_configured})
        row = rows[-1]
        row["score"] = (row["val_score"] if score == "val"
                        else (row["id_score"] + row["val_score"]) / 2)
    # Written after every candidate: a stopped run shows what it has, marked
    # incomplete; its choice counts only once every candidate is in.
    result = _result(config, task, grid, axes, models, rows, complete=i == len(cands) - 1,
                     score=score, heuristics=baselines)
    with open(os.path.join(workdir, "selection.json"), "w") as f:
      json.dump(result, f, indent=1)
    with open(os.path.join(workdir, "selection.md"), "w") as f:
      f.write(markdown(result) + "\n")
  return result


def _configured_index(config, cands) -> int | None:
  """The index of the first candidate whose config is `config` itself, or None."""
  base = config.to_dict()
  for i, (_, cfg) in enumerate(cands):
    if cfg.to_dict() == base:
      return i
  return None


def _result(config, task, grid, axes, models, rows, complete, score="val", heuristics=None):
  chosen = {}
  for name in models:
    mine = [r for r in rows if r["model"] == name]
    best = max(mine, key=lambda r: (r["score"], r.get("configured", False), -r["candidate"]))
    chosen[name] = {"candidate": best["candidate"], "overrides": best["overrides"],
                    "val_score": best["val_score"], "score": best["score"]}
  return {"task": config.task, "grid": grid, "score": score,
          "axes": [[p, v] for p, v in axes],
          "val_intents": [task.format_intent(i) for i in task.val_intents],
          "complete": complete, "rows": rows, "chosen": chosen,
          "heuristics_val": heuristics or {}}


def lowest_id(row) -> str:
  """The training intent a row fits worst, "name seed-mean" ("-" if the row
  holds no per-intent ID figures): a mean over many easy intents can hide
  one that is not fitted (ADDMOD's ID mean 0.99 with p = 97 at 0.8)."""
  per_intent = row.get("id") or {}
  if not per_intent:
    return "-"
  name = min(per_intent, key=lambda k: float(np.mean(per_intent[k])))
  return f"{name} {float(np.mean(per_intent[name])):.3f}"


def markdown(result) -> str:
  """selection.md: one row per (candidate, model), the chosen ones in bold."""
  paths = [p for p, _ in result["axes"]]
  by_both = result.get("score", "val") == "id+val"
  lines = [f"Validation intents: {', '.join(result['val_intents'])}. OOD intents were not "
           "evaluated. Chosen on "
           + ("the mean of ID and val" if by_both else "val") + "."
           + ("" if result.get("complete", True) else
              " INCOMPLETE: not every candidate has run; the choice is provisional."), "",
           "| model | " + " | ".join(paths) + " | params | seeds | ID mean | lowest ID intent "
           "| val mean ± std |" + (" mean of ID and val |" if by_both else ""),
           "|---|" + "---|" * len(paths) + "---|---|---|---|---|" + ("---|" if by_both else "")]
  for r in result["rows"]:
    picked = result["chosen"][r["model"]]["candidate"] == r["candidate"]
    val = f"{r['val_score']:.3f} ± {r['val_std']:.3f}"
    marks = ["as configured"] * bool(r.get("configured")) + ["chosen"] * picked
    lines.append(f"| {r['model']}{' (' + ', '.join(marks) + ')' if marks else ''} | "
                 + " | ".join(str(r["overrides"].get(p, "-")) for p in paths)
                 + f" | {r['num_params']:,} | {len(r['seeds'])} | "
                 + ("-" if r["id_score"] is None else f"{r['id_score']:.3f}") + " | "
                 + lowest_id(r) + " | "
                 + (f"**{val}**" if picked and not by_both else val) + " |"
                 + ((f" **{r['score']:.3f}** |" if picked else f" {r['score']:.3f} |")
                    if by_both else ""))
  if result.get("heuristics_val"):
    lines += ["", "One-line baselines on the same validation examples (no training): "
              + "; ".join(f"{name} {v:.3f}" for name, v in result["heuristics_val"].items())
              + "."]
  return "\n".join(lines)
