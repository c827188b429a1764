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

If `oracle` is far above `readout` on an OOD intent, recognition is what
fails there; if both are low, the learner does not extrapolate to it even
from the exact label. Only training and validation intents may guide a choice;
the OOD lines are for the account in BUILD_NOTES.

  PYTHONPATH=. python benchmarks/recognition_gap.py --workdir=DIR \
      [--models=meta_mlp,meta_gmlp,meta_gnn] [--eval_examples=320] > gap.jsonl

One JSON line per (model, split): exact match mean over seeds for readout and
oracle, the readout's error, and the same per intent.
"""

import argparse
import json
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from neuroprog import intents as intents_lib  # pylint: disable=g-import-not-at-top,wrong-import-position
from neuroprog.programs import executor as execute_lib
from neuroprog.run import workdir as workdir_lib
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


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--workdir", required=True)
  parser.add_argument("--models", default="meta_mlp,meta_gmlp,meta_gnn")
  parser.add_argument("--splits", default="id,val,ood")
  parser.add_argument("--eval_examples", type=int, default=320)
  parser.add_argument("--seed", type=int, default=0)
  args = parser.parse_args()
  config = workdir_lib.read_config(args.workdir)
  if config.get("intent") != "examples" or not config.get("intent_label_input"):
    raise SystemExit(f"--workdir {args.workdir}: intent {config.get('intent')!r}, "
                     f"intent_label_input {config.get('intent_label_input')!r}; needs a workdir "
                     "trained on example intents with intent_label_input=True.")
  splits = args.splits.split(",")
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


if __name__ == "__main__":
  main()
