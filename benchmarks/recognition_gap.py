"""Where do example intents lose accuracy: recognising the intent, or the
program synthesized from it? A diagnostic for issue 27.

For a trained example-intent workdir whose hypernetworks read the label
readout (`intent_label_input=True`), this scores every intent of a split three
ways, with the same support sets and queries:

  readout: the model as trained (encoder -> readout -> learner -> θ, with the
           workdir's intent_label_feed: as is, detached or snapped);
  oracle:  the same learner fed the intent's true label features instead of
           the readout (what the learner synthesizes when recognition is exact;
           for a snapped feed, what it reads wherever recognition is right);
and reads the readout's squared error against the label features (the
training label loss, summed over the F features), the share of support sets
whose readout names the right family (argmax over the family block) and the
readout's parameter error in the task's units (|readout - k| for a family with
a parameter k; 0 for the others).

With --data (the 1D-ARC folder), the same three readings on the official
tasks of every folder that maps to a training family, for every seed: each
task's support set is its first `shots` train pairs (as `experiments.eval_arc1d
--intent=examples` reads them), `readout` and `oracle` score its test pairs,
and the readout's family and snapped parameter are compared with the folder's
intent. One JSON line per (model, folder) with split "official".

If `oracle` is far above `readout` on an OOD intent, recognition is what
fails there; if both are low, the learner does not extrapolate to it even
from the exact label. Only training and validation intents may guide a choice;
the OOD lines are for the account in BUILD_NOTES.

  PYTHONPATH=. python benchmarks/recognition_gap.py --workdir=DIR \
      [--models=meta_mlp,meta_gmlp,meta_gnn] [--eval_examples=320] \
      [--data=../shared/data/1d-arc] > gap.jsonl

One JSON line per (model, split): exact match mean over seeds for readout and
oracle, the readout's error, and the same per intent.
"""

import argparse
import functools
import json
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from experiments.pipelines import eval_arc1d  # pylint: disable=g-import-not-at-top,wrong-import-position
from neuroprog import intents as intents_lib  # pylint: disable=g-import-not-at-top,wrong-import-position
from neuroprog.programs import executor as execute_lib
from neuroprog.tasks.arc1d import families, io
from neuroprog.train import loop
from neuroprog.train import step as step_lib


def split_intents(task, split):
  return {"id": task.train_intents, "val": task.val_intents, "ood": task.ood_intents}[split]


def score(trainer, params_S, intents, key, n_examples):
  """(readout acc, oracle acc, readout squared error, readout family accuracy,
  readout parameter |error| in the task's units), each float[S, I]."""
  task, model = trainer.task, trainer.model
  feats = jnp.asarray(task.features(intents))
  ip = jnp.asarray(task.intent_params(intents))
  param_scale = task.label_units[-2]   # the parameter feature is k / scale
  draws = min(loop.EVAL_SUPPORT_DRAWS, n_examples)
  feats_r, ip_r = jnp.tile(feats, (draws, 1)), jnp.tile(ip, (draws, 1))
  support, x, y = step_lib.draw(model, task, key, feats_r, ip_r, n_examples // draws)

  def per_intent(v_B):
    return v_B.reshape(draws, -1).mean(0)

  @jax.jit
  @jax.vmap
  def per_seed(params):
    u, labels = model._input_and_labels(params, support)  # pylint: disable=protected-access
    run = jax.vmap(execute_lib.execute, (None, 0, 0))
    theta = model.learner._apply(params["learner"], u)  # pylint: disable=protected-access
    theta_oracle = model.learner._apply(params["learner"], feats_r)  # pylint: disable=protected-access
    acc = task.exact_match(run(model.spec, theta, x), y, ip_r).mean(-1)
    acc_oracle = task.exact_match(run(model.spec, theta_oracle, x), y, ip_r).mean(-1)
    err = jnp.sum((labels - feats_r) ** 2, -1)
    # The readout's family (argmax over the family block) and its parameter
    # estimate in the task's units (the feature is param / scale).
    n_fam = feats_r.shape[-1] - 2
    fam_ok = jnp.argmax(labels[:, :n_fam], -1) == jnp.argmax(feats_r[:, :n_fam], -1)
    param_err = jnp.abs(labels[:, -2] - feats_r[:, -2]) * param_scale
    return (per_intent(acc), per_intent(acc_oracle), per_intent(err),
            per_intent(fam_ok.astype(jnp.float32)), per_intent(param_err))
  return [np.asarray(a) for a in per_seed(params_S)]


def score_official(trainer, params_S, arc_tasks, intent):
  """On official tasks of one folder mapped to `intent`: (readout acc, oracle
  acc, family recognised, snapped parameter right), each float[S, N] over the
  S seeds and the N tasks whose grids fit; and the number that do not fit."""
  task, model = trainer.task, trainer.model
  max_len, shots = task.spec.max_len, model.shots
  feats_1xF = jnp.asarray(task.features([intent]))
  n_fam = feats_1xF.shape[-1] - 2
  run = jax.vmap(execute_lib.execute, (None, 0, 0))

  @jax.jit
  @functools.partial(jax.vmap, in_axes=(0, None, None))
  def per_seed(params, support, x_1xNxL):
    u, labels = model._input_and_labels(params, support)  # pylint: disable=protected-access
    theta = model.learner._apply(params["learner"], u)  # pylint: disable=protected-access
    theta_oracle = model.learner._apply(params["learner"], feats_1xF)  # pylint: disable=protected-access
    pred = task.predict(run(model.spec, theta, x_1xNxL), None)[0]
    pred_oracle = task.predict(run(model.spec, theta_oracle, x_1xNxL), None)[0]
    snapped = task.snap_features(labels)
    fam_ok = jnp.argmax(labels[:, :n_fam], -1) == jnp.argmax(feats_1xF[:, :n_fam], -1)
    param_ok = jnp.all(jnp.abs(snapped[:, -2:] - feats_1xF[:, -2:]) < 1e-6, -1)
    return pred, pred_oracle, fam_ok[0], fam_ok[0] & param_ok[0]

  rows = max(len(t.test) for t in arc_tasks)   # test pairs padded to one shape per folder
  cols, skipped = [], 0
  for t in arc_tasks:
    pairs = list(t.train[:shots]) + list(t.test)
    if any(len(a) > max_len or len(b) > max_len for a, b in pairs):
      skipped += 1
      continue
    support = intents_lib.support_from_pairs(list(t.train[:shots]), max_len=max_len,
                                             pad=task.pad, n_colours=task.n_colours,
                                             shots=shots)
    x = np.full((rows, max_len), families.PAD, np.int32)
    x[:len(t.test)] = io.encode([a for a, _ in t.test], max_len)
    y = io.encode([b for _, b in t.test], max_len)
    pred, pred_oracle, fam_ok, both_ok = (np.asarray(v) for v in
                                          per_seed(params_S, support, jnp.asarray(x)[None]))
    def solved(p_SxRxL):
      p = p_SxRxL[:, :len(t.test)]
      return np.all((p == y) | (y == families.PAD), -1).all(-1)
    cols.append((solved(pred), solved(pred_oracle), fam_ok, both_ok))
  if not cols:
    return None, skipped
  return [np.stack([c[i] for c in cols], -1).astype(np.float32) for i in range(4)], skipped


def official(trainer, state, step, data):
  """JSON lines (split "official") for every folder of `data` mapped to a
  training family of the trainer's task."""
  task = trainer.task
  trained = {f for f, _ in task.train_intents}
  for folder in eval_arc1d.family_folders(data):
    try:
      intent = task.check_intent(io.intent_for(folder.name))
    except ValueError:
      continue
    if intent[0] not in trained:
      continue
    t0 = time.time()
    scores, skipped = score_official(trainer, state.params, io.load(folder), intent)
    if scores is None:
      continue
    acc, oracle, fam_ok, both_ok = scores
    print(json.dumps({
        "model": trainer.name, "split": "official", "folder": folder.name,
        "intent": task.format_intent(intent), "step": int(step), "tasks": acc.shape[1],
        "tasks_not_fitting": skipped,
        "readout_solved": [round(float(v), 3) for v in acc.mean(1)],
        "oracle_solved": [round(float(v), 3) for v in oracle.mean(1)],
        "family_recognised": [round(float(v), 3) for v in fam_ok.mean(1)],
        "intent_recognised": [round(float(v), 3) for v in both_ok.mean(1)],
        "seeds": [int(s) for s in trainer.seeds],
        "seconds": round(time.time() - t0, 1)}), flush=True)


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--workdir", required=True)
  parser.add_argument("--models", default="meta_mlp,meta_gmlp,meta_gnn")
  parser.add_argument("--splits", default="id,val,ood")
  parser.add_argument("--eval_examples", type=int, default=320)
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--data", default=None,
                      help="the 1D-ARC folder: also score its official tasks")
  args = parser.parse_args()
  config = loop.read_run_config(args.workdir)
  if config.get("intent") != "examples" or not config.get("intent_label_input"):
    raise SystemExit(f"--workdir {args.workdir}: intent {config.get('intent')!r}, "
                     f"intent_label_input {config.get('intent_label_input')!r}; needs a workdir "
                     "trained on example intents with intent_label_input=True.")
  splits = [s for s in args.splits.split(",") if s]   # "": official tasks only
  bad = [s for s in splits if s not in loop.SPLITS]
  if bad or args.eval_examples < intents_lib.MAX_SHOTS:
    raise SystemExit(f"--splits {bad} (allowed {loop.SPLITS}) / --eval_examples "
                     f"{args.eval_examples} (at least {intents_lib.MAX_SHOTS}).")
  task = loop.build_task(config)
  for name in args.models.split(","):
    trainer = loop.Trainer(config, task, name)
    if not isinstance(trainer.model, intents_lib.ExampleIntentModel) or trainer.model.is_direct:
      raise SystemExit(f"--models: {name!r} is not a hypernetwork behind an example encoder.")
    step, state = trainer.restore(args.workdir)
    for split in splits:
      intents = split_intents(task, split)
      t0 = time.time()
      acc, oracle, err, fam_ok, param_err = score(trainer, state.params, intents, jax.random.key(args.seed),
                               args.eval_examples)
      print(json.dumps({
          "model": name, "split": split, "step": int(step), "seeds": len(trainer.seeds),
          "readout_acc": round(float(acc.mean()), 4),
          "oracle_acc": round(float(oracle.mean()), 4),
          "readout_error": round(float(err.mean()), 4),
          "family_acc": round(float(fam_ok.mean()), 4),
          "per_intent": {task.format_intent(i): {
              "readout": round(float(acc[:, j].mean()), 3),
              "oracle": round(float(oracle[:, j].mean()), 3),
              "error": round(float(err[:, j].mean()), 3),
              "family_acc": round(float(fam_ok[:, j].mean()), 3),
              "param_abs_error": round(float(param_err[:, j].mean()), 3)}
                         for j, i in enumerate(intents)},
          "seconds": round(time.time() - t0, 1)}), flush=True)
    if args.data:
      official(trainer, state, step, args.data)


if __name__ == "__main__":
  main()
