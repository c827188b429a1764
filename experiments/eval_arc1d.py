"""Scores the programs of a trained 1D-ARC workdir on the official 1D-ARC tasks.

  python -m experiments.eval_arc1d --workdir=workdirs/arc1d --data=../shared/data/1d-arc \
      [--model=meta_gnn --model=direct] [--seed=S] [--out=DIR] [--intent=examples]

Each model synthesizes the program from the family's intent alone (or, for a
workdir trained on example intents, from each task's own train pairs) and runs
it on every train and test pair (`experiments.pipelines.eval_arc1d`); prints and
writes arc1d_eval.md and arc1d_eval.json.
"""

import sys

from absl import app
from absl import flags

from experiments.pipelines import eval_arc1d
from neuroprog.run import logs

_WORKDIR = flags.DEFINE_string("workdir", None, "A trained arc1d workdir.")
_DATA = flags.DEFINE_string("data", None, "The 1D-ARC folder (one folder per family).")
_MODEL = flags.DEFINE_multi_string("model", None, "Models to score (default: all).")
_SEED = flags.DEFINE_integer("seed", None, "Seed value (default: chosen on validation).")
_OUT = flags.DEFINE_string("out", None, "Output folder (default: the workdir).")
_INTENT = flags.DEFINE_enum("intent", None, ["label", "examples"],
                            "How the workdir's models read intents (default: its config). "
                            "examples: each task's train pairs are its intent.")
_REFINE_STEPS = flags.DEFINE_integer(
    "refine_steps", None, "Example intents: Adam steps fitting each task's program to its "
    "support pairs (default: the workdir config's refine_steps; 0: none).")
_REFINE_LR = flags.DEFINE_float("refine_learning_rate", None,
                                "Their rate (default: the workdir config's).")
_REFINE_TARGET = flags.DEFINE_string("refine_target", None,
                                     "theta or intent (default: the workdir config's).")
_REFINE_GATE = flags.DEFINE_string(
    "refine_gate", None, "always, support_wrong or held_out (default: the workdir config's).")
_SEARCH_FAMILIES = flags.DEFINE_integer(
    "refine_search_families", None, "Example intents: readout families whose candidate "
    "intents are verified on each task's support pairs (default: the workdir config's; "
    "0: no search).")
_SEARCH_RADIUS = flags.DEFINE_integer(
    "refine_search_radius", None, "Parameter steps either side of each family's estimate "
    "(default: the workdir config's).")
flags.mark_flags_as_required(["workdir", "data"])


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Too many command-line arguments: {argv[1:]}")
  logs.setup_from_flags()
  try:
    out = eval_arc1d.run(_WORKDIR.value, _DATA.value, models=_MODEL.value, seed=_SEED.value,
                         out_dir=_OUT.value, intent=_INTENT.value,
                         refine_steps=_REFINE_STEPS.value,
                         refine_learning_rate=_REFINE_LR.value,
                         refine_target=_REFINE_TARGET.value,
                         refine_gate=_REFINE_GATE.value,
                         refine_search_families=_SEARCH_FAMILIES.value,
                         refine_search_radius=_SEARCH_RADIUS.value)
  except ValueError as e:
    print(f"error: {e}", file=sys.stderr)
    sys.exit(2)
  print(eval_arc1d.markdown(out))


if __name__ == "__main__":
  app.run(main)
