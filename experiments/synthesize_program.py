"""Writes the program a trained meta-learner synthesizes for one intent.

  python -m experiments.synthesize_program --workdir=DIR --model=meta_gnn \
      --intent=p=83 --out=program.npz [--seed=S]

The .npz holds the named tensors of θ and "spec" (the spec as JSON); the
command prints the program's exact-match accuracy on fresh samples. An
invalid intent exits non-zero with the task's message.
"""

import sys

from absl import app
from absl import flags
import jax
import jax.numpy as jnp
import numpy as np

import neuroprog
from neuroprog import synthesis
from neuroprog.run import logs, seeds

_WORKDIR = flags.DEFINE_string("workdir", None, "A trained workdir.")
_MODEL = flags.DEFINE_string("model", "meta_gnn", "Which meta-learner.")
_INTENT = flags.DEFINE_string("intent", None, "e.g. p=83, n=4, family=move_right,k=3")
_OUT = flags.DEFINE_string("out", None, "Output .npz path.")
_SEED = flags.DEFINE_integer("seed", None,
                             "Seed value of the run (default: by validation, else ID).")
_EXAMPLES = flags.DEFINE_integer("examples", 1000, "Fresh samples for the accuracy.")
flags.mark_flags_as_required(["workdir", "intent", "out"])


def main(argv):
  del argv
  logs.setup_from_flags()
  try:
    run = synthesis.load_run(_WORKDIR.value, _MODEL.value)
    intent = run.task.parse_intent(_INTENT.value)
    seed = (synthesis.select_seed(_WORKDIR.value, _MODEL.value)
            if _SEED.value is None else _SEED.value)
    params = seeds.take(run.params_S, seeds.index_of(run.seeds, seed))
    spec, theta = synthesis.synthesize_from_params(params, intent, model=run.model,
                                                   task=run.task)
  except ValueError as e:
    print(f"error: {e}", file=sys.stderr)
    sys.exit(2)
  tensors = {k: np.asarray(v) for k, v in neuroprog.unflatten(spec, theta).items()}
  np.savez(_OUT.value, spec=np.array(synthesis.spec_json(spec)), **tensors)
  task = run.task
  ip = jnp.asarray(task.intent_params([intent]))
  x, y = task.sample_params(jax.random.key(2024), ip, _EXAMPLES.value)
  out = neuroprog.execute(spec, theta, x[0])[None]
  acc = float(task.exact_match(out, y, ip).mean())
  print(f"{_MODEL.value} (seed {seed}, step {run.step}) {task.format_intent(intent)}: "
        f"exact match {acc:.4f} on {_EXAMPLES.value} fresh samples; wrote {_OUT.value}")


if __name__ == "__main__":
  app.run(main)
