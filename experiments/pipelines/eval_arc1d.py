"""Synthesized programs scored on the official 1D-ARC tasks.

Run by `python -m experiments.eval_arc1d`; `run(workdir, data)` from a
notebook.

For every family folder under `data` (the public layout: one folder per
family, one JSON task per file) whose family maps to one of our intents
(`tasks.arc1d.io.intent_for`), each model of the trained 1D-ARC workdir is
given the intent alone (the task's pairs are never shown to a
meta-learner): a hypernetwork synthesizes θ once per family and runs it on
every train and test pair of every task; the direct baseline maps (intent,
grid) to the output grid. Grids longer than the target's `max_len` cannot
be encoded: they are counted as "does not fit", never dropped silently.
Folders whose family none of ours covers are listed by name.

A workdir trained on example intents (config.intent="examples") is scored the
way a new task would be met: each task's train pairs (the first `shots` of
them) are the support set, θ is synthesized once per task from them and run
on the task's test pairs (and, in parentheses, its train pairs). The family
name is never used, so every folder is scored, and the table reports (i)
folders whose family the model was trained on and (ii) folders of families
it never saw (program generalisation). A task whose support pairs do not fit
`max_len` counts all its test pairs as "does not fit".

The seed of each model is the one `synthesis.select_seed` picks (best
validation accuracy, or ID without validation intents) unless `seed` is
given. With a support refinement (`train.refine`; the workdir config's
refine_* keys, or `run`'s arguments) each hypernetwork's program is fitted to
the task's support pairs before it is scored. Writes `arc1d_eval.json` and
`arc1d_eval.md` (into `out_dir`, default the workdir).
"""

from __future__ import annotations

import functools
import json
import os
import pathlib
from typing import Any, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from neuroprog import intents as intents_lib
from neuroprog import synthesis
from neuroprog.run import seeds as seeds_lib
from neuroprog.programs import executor as execute_lib
from neuroprog.tasks.arc1d import families, io
from neuroprog.train import loop, refine as refine_lib, step as step_lib

# Pairs per jitted call: every family is padded to a multiple of it, so each
# model compiles its forward pass once.
CHUNK = 256
SPLITS = ("train", "test")


def family_folders(data) -> list[pathlib.Path]:
  """The family folders of `data`: its sub-folders holding *.json files, or
  `data` itself when it holds task files directly."""
  path = pathlib.Path(data)
  if not path.is_dir():
    raise ValueError(f"--data={data}: no such folder (expected the 1D-ARC layout, one "
                     "folder of JSON tasks per family).")
  if any(path.glob("*.json")):
    return [path]
  out = sorted(p for p in path.iterdir() if p.is_dir() and any(p.glob("*.json")))
  if not out:
    raise ValueError(f"--data={data}: holds no family folders of *.json tasks.")
  return out


def _split_of(task, intent) -> str:
  for name in ("train", "val", "ood"):
    if intent in tuple(getattr(task, f"{name}_intents")):
      return name
  return "unseen"


def _forward(model, task):
  """jitted (params, u [1, F], x [1, CHUNK, L], ip [1, P]) -> predictions [CHUNK, L]."""
  @jax.jit
  def f(params, u, x, ip):
    return task.predict(step_lib.outputs_for(model, params, u, x), ip)[0]
  return f


def _score_pairs(forward, params, task, intent, pairs) -> dict[str, Any]:
  """Exact match of a model on pairs [(x, y)] of one intent; per_pair is
  True / False per pair, None where the grid does not fit."""
  max_len = task.spec.max_len
  fits = [len(x) <= max_len for x, _ in pairs]
  fit = [p for p, ok in zip(pairs, fits) if ok]
  out = {"pairs": len(pairs), "does_not_fit": len(pairs) - len(fit), "correct": 0,
         "exact_match": None, "per_pair": [None] * len(pairs)}
  if not fit:
    return out
  u = jnp.asarray(task.features([intent]))
  ip = jnp.asarray(task.intent_params([intent]))
  correct = []
  for lo in range(0, len(fit), CHUNK):
    part = fit[lo:lo + CHUNK]
    x = np.full((CHUNK, max_len), families.PAD, np.int32)
    x[:len(part)] = io.encode([p[0] for p in part], max_len)
    y = io.encode([p[1] for p in part], max_len)
    pred = np.asarray(forward(params, u, jnp.asarray(x)[None], ip))[:len(part)]
    correct += np.all((pred == y) | (y == families.PAD), -1).tolist()
  it = iter(correct)
  out.update(correct=int(sum(correct)), exact_match=float(np.mean(correct)),
             per_pair=[bool(next(it)) if ok else None for ok in fits])
  return out


# Query rows per jitted call in example mode (a task's test or train pairs).
TASK_CHUNK = 8


def _example_forward(model, task, refinement: refine_lib.Refinement):
  """(params, support [1, K, L]) -> the task's program: x [1, TASK_CHUNK, L] ->
  predictions int32[TASK_CHUNK, L]. A hypernetwork synthesizes θ once per task
  (its intent searched on, or θ refined on, the task's own support pairs when
  the refinement is active); the
  in-context model reads the support pairs with every query."""
  if refine_lib.is_active(refinement) and refine_lib.can_refine(model):
    run = jax.jit(lambda th, x: task.predict(
        jax.vmap(execute_lib.execute, (None, 0, 0))(model.spec, th, x), None)[0])

    def program(params, support):
      # One seed as a seed axis of 1: the refinement steps run only where the
      # gate may change the program (a task whose pairs θ0 solves skips them).
      params_S = jax.tree_util.tree_map(lambda a: a[None], params)
      theta = refine_lib.refined_theta_per_seed(model, task, params_S, support, refinement)
      return functools.partial(run, theta[0])
    return program

  @jax.jit
  def f(params, support, x):
    return task.predict(step_lib.outputs_for(model, params, support, x), None)[0]
  return lambda params, support: functools.partial(f, params, support)


def _score_with_examples(forward, params, task, model, arc_tasks) -> dict[str, Any]:
  """Per family: each task's program from its own train pairs, scored on its
  test pairs (and train pairs); tasks solved."""
  max_len, shots = task.spec.max_len, model.shots
  row = {"tasks": len(arc_tasks), "tasks_solved": 0}
  tallies = {sp: {"pairs": 0, "does_not_fit": 0, "correct": 0} for sp in SPLITS}
  for t in arc_tasks:
    support_pairs = list(t.train[:shots])
    fits = all(len(x) <= max_len and len(y) <= max_len for x, y in support_pairs)
    support = (intents_lib.support_from_pairs(support_pairs, max_len=max_len, pad=task.pad,
                                              n_colours=task.n_colours, shots=shots)
               if fits else None)
    program = forward(params, support) if support is not None else None
    test_right = []
    for sp in SPLITS:
      pairs = list(getattr(t, sp))
      tallies[sp]["pairs"] += len(pairs)
      ok = [p for p in pairs if support is not None and len(p[0]) <= max_len]
      tallies[sp]["does_not_fit"] += len(pairs) - len(ok)
      for lo in range(0, len(ok), TASK_CHUNK):
        part = ok[lo:lo + TASK_CHUNK]
        x = np.full((TASK_CHUNK, max_len), families.PAD, np.int32)
        x[:len(part)] = io.encode([p[0] for p in part], max_len)
        y = io.encode([p[1] for p in part], max_len)
        pred = np.asarray(program(jnp.asarray(x)[None]))[:len(part)]
        right = np.all((pred == y) | (y == families.PAD), -1)
        tallies[sp]["correct"] += int(right.sum())
        if sp == "test":
          test_right += right.tolist()
      if sp == "test":
        row["tasks_solved"] += int(len(ok) == len(pairs) and all(test_right))
  for sp in SPLITS:
    fit = tallies[sp]["pairs"] - tallies[sp]["does_not_fit"]
    row[sp] = {**tallies[sp], "exact_match": tallies[sp]["correct"] / fit if fit else None}
  return row


def run(workdir: str, data, *, models: Optional[Sequence[str]] = None,
        seed: Optional[int] = None, out_dir: Optional[str] = None,
        intent: Optional[str] = None, refine_steps: Optional[int] = None,
        refine_learning_rate: Optional[float] = None,
        refine_target: Optional[str] = None,
        refine_gate: Optional[str] = None,
        refine_search_families: Optional[int] = None,
        refine_search_radius: Optional[int] = None) -> dict[str, Any]:
  """Scores every model of an arc1d workdir on the official tasks (module doc).

  intent: "label" or "examples", the kind of intent the workdir was trained
  on (default: read from its config; a mismatch is refused).
  refine_*: the support refinement of example intents (`train.refine`): each
  task's program fitted to its own support pairs before it is scored; None:
  the workdir config's value."""
  config = loop.read_run_config(workdir)
  if config.task != "arc1d":
    raise ValueError(f"{workdir} trained task {config.task!r}; eval_arc1d needs an "
                     "'arc1d' workdir.")
  kind = config.get("intent", "label")
  if intent is not None and intent != kind:
    raise ValueError(f"--intent={intent}: {workdir} was trained on {kind} intents; allowed: "
                     f"--intent={kind} (or leave it out).")
  models = list(models or config.models)
  unknown = [m for m in models if m not in config.models]
  if unknown:
    raise ValueError(f"--model={unknown}: {workdir} trained {list(config.models)}.")
  given = {k: v for k, v in {"steps": refine_steps, "learning_rate": refine_learning_rate,
                             "target": refine_target,
                             "gate": refine_gate, "search_families": refine_search_families,
                             "search_radius": refine_search_radius}.items()
           if v is not None}
  refinements = {}
  for name in models:
    # Each model's own refinement from the workdir config (refine_by_model),
    # the arguments given replacing its fields for every model.
    refinements[name] = refine_lib.check(
        **{**loop.refinement_of(config, name)._asdict(), **given}, prefix="--refine_")
    if refinements[name].steps and kind != "examples":
      raise ValueError(f"--refine_steps={refinements[name].steps} fits programs to their "
                       f"support pairs; {workdir} was trained on label intents. Allowed: 0.")
    if refinements[name].search_families and kind != "examples":
      raise ValueError(f"--refine_search_families={refinements[name].search_families} "
                       f"searches intents on support pairs; {workdir} was trained on label "
                       "intents. Allowed: 0.")
  if kind == "examples":
    return _run_examples(workdir, data, config, models, seed, out_dir, refinements)
  mapped, unmapped = [], []
  for folder in family_folders(data):
    try:
      intent = io.intent_for(folder.name)
    except ValueError:
      unmapped.append(folder.name)
      continue
    mapped.append((folder.name, intent, io.load(folder)))   # errors name the file
  results = {"workdir": workdir, "data": str(data), "unmapped": unmapped, "models": {}}
  for name in models:
    r = synthesis.load_run(workdir, name)
    s = synthesis.select_seed(workdir, name) if seed is None else seed
    params = seeds_lib.take(r.params_S, seeds_lib.index_of(r.seeds, s))
    forward = _forward(r.model, r.task)
    per_family = {}
    for folder, intent, arc_tasks in mapped:
      intent = r.task.check_intent(intent)
      row = {"intent": r.task.format_intent(intent), "split": _split_of(r.task, intent),
             "tasks": len(arc_tasks)}
      for sp in SPLITS:
        pairs = [p for t in arc_tasks for p in getattr(t, sp)]
        row[sp] = _score_pairs(forward, params, r.task, intent, pairs)
      # A task is solved when every one of its test pairs fits and is right.
      verdicts, k, solved = row["test"].pop("per_pair"), 0, 0
      for t in arc_tasks:
        solved += all(v is True for v in verdicts[k:k + len(t.test)])
        k += len(t.test)
      row["tasks_solved"] = int(solved)
      row["train"].pop("per_pair")
      per_family[folder] = row
    results["models"][name] = {"seed": int(s), "step": int(r.step),
                               "families": per_family,
                               "overall": _overall(per_family)}
  return _write(results, out_dir or workdir)


def _run_examples(workdir, data, config, models, seed, out_dir,
                  refinements: dict[str, refine_lib.Refinement]) -> dict[str, Any]:
  folders = []
  for folder in family_folders(data):
    try:
      intent = io.intent_for(folder.name)
    except ValueError:
      intent = None
    folders.append((folder.name, intent, io.load(folder)))   # errors name the file
  results = {"workdir": workdir, "data": str(data), "intent": "examples",
             "shots": int(config.shots),
             "refinement": {n: refinements[n]._asdict()
                            for n in loop.refinements_of(config, models)},
             "unmapped": [], "models": {}}
  for name in models:
    r = synthesis.load_run(workdir, name)
    s = synthesis.select_seed(workdir, name) if seed is None else seed
    params = seeds_lib.take(r.params_S, seeds_lib.index_of(r.seeds, s))
    forward = _example_forward(r.model, r.task, refinements[name])
    trained = {f for f, _ in r.task.train_intents}
    per_family = {}
    for folder, intent, arc_tasks in folders:
      row = _score_with_examples(forward, params, r.task, r.model, arc_tasks)
      if intent is None:
        row.update(intent="-", split="unseen family")
      else:
        intent = r.task.check_intent(intent)
        row.update(intent=r.task.format_intent(intent),
                   split=(_split_of(r.task, intent) if intent[0] in trained
                          else "unseen family"))
      per_family[folder] = row
    groups = {"trained families": {f: v for f, v in per_family.items()
                                   if v["split"] != "unseen family"},
              "unseen families": {f: v for f, v in per_family.items()
                                  if v["split"] == "unseen family"}}
    results["models"][name] = {"seed": int(s), "step": int(r.step), "families": per_family,
                               "overall": _overall(per_family),
                               **{g: _overall(v) for g, v in groups.items()}}
  return _write(results, out_dir or workdir)


def _write(results, out_dir) -> dict[str, Any]:
  """arc1d_eval.json and arc1d_eval.md into out_dir; returns results."""
  os.makedirs(out_dir, exist_ok=True)
  with open(os.path.join(out_dir, "arc1d_eval.json"), "w") as f:
    json.dump(results, f, indent=1)
  with open(os.path.join(out_dir, "arc1d_eval.md"), "w") as f:
    f.write(markdown(results) + "\n")
  return results


def _overall(per_family) -> dict[str, Any]:
  out = {}
  for sp in SPLITS:
    fit = sum(r[sp]["pairs"] - r[sp]["does_not_fit"] for r in per_family.values())
    correct = sum(r[sp]["correct"] for r in per_family.values())
    out[sp] = {"exact_match": correct / fit if fit else None, "fit": fit,
               "does_not_fit": sum(r[sp]["does_not_fit"] for r in per_family.values())}
  out["tasks_solved"] = sum(r["tasks_solved"] for r in per_family.values())
  out["tasks"] = sum(r["tasks"] for r in per_family.values())
  return out


def _refined(refinements) -> str:
  refined = {n: r for n, r in (refinements or {}).items() if refine_lib.is_active(r)}
  if not refined:
    return ""
  return (", and the program is then chosen on or fitted to those pairs (" + "; ".join(
      f"{n}: {refine_lib.describe(r)}" for n, r in refined.items()) + "), so the train-pair figure of a refined model is "
      "partly a fit")


def markdown(results) -> str:
  """arc1d_eval.md: exact match per family (rows) and model (columns)."""
  names = list(results["models"])
  fams = list(next(iter(results["models"].values()))["families"]) if names else []
  pct = lambda v: "-" if v is None else f"{v:.3f}"
  source = ("the program comes from the intent alone" if results.get("intent") != "examples"
            else f"each task's program comes from its first {results['shots']} train pairs "
                 "(the family name is never read)" + _refined(results.get("refinement")))
  lines = [f"Official 1D-ARC tasks from {results['data']}; exact match on test pairs "
           f"(train pairs), tasks solved; {source}.", "",
           "| family (intent, split) | " + " | ".join(
               f"{n} (seed {results['models'][n]['seed']})" for n in names) + " |",
           "|---|" + "---|" * len(names)]
  for fam in fams:
    first = results["models"][names[0]]["families"][fam]
    cells = []
    for n in names:
      r = results["models"][n]["families"][fam]
      nofit = r["test"]["does_not_fit"] + r["train"]["does_not_fit"]
      cells.append(f"{pct(r['test']['exact_match'])} ({pct(r['train']['exact_match'])}), "
                   f"{r['tasks_solved']}/{r['tasks']}"
                   + (f", {nofit} pairs do not fit" if nofit else ""))
    lines.append(f"| {fam} ({first['intent']}, {first['split']}) | " + " | ".join(cells) + " |")
  groups = (("trained families", "unseen families", "overall")
            if results.get("intent") == "examples" else ("overall",))
  for group in groups:
    cells = []
    for n in names:
      o = results["models"][n][group]
      nofit = o["test"]["does_not_fit"] + o["train"]["does_not_fit"]
      cells.append("-" if not o["tasks"] else
                   f"{pct(o['test']['exact_match'])} ({pct(o['train']['exact_match'])}), "
                   f"{o['tasks_solved']}/{o['tasks']}"
                   + (f", {nofit} pairs do not fit" if nofit else ""))
    lines.append(f"| **{group}** | " + " | ".join(cells) + " |")
  if results["unmapped"]:
    lines += ["", "Folders with no matching family (not scored): "
              + ", ".join(results["unmapped"]) + "."]
  return "\n".join(lines)
