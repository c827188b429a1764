"""The clock analysis of a trained ADDMOD workdir (issue: mechanistic analysis).

  python -m experiments.analyze_clock --workdir=workdirs/addmod --out=OUT \
      [--model=meta_gnn,meta_mlp]

Writes OUT/analysis.json, clock_p83.png, clock_grid.png and pc1_vs_p.png and
prints a table. Without --model every hypernetwork of the workdir is analysed.
"""

from absl import app
from absl import flags
from absl import logging

from neuroprog.analysis import report

_WORKDIR = flags.DEFINE_string("workdir", None, "A trained ADDMOD workdir.")
_OUT = flags.DEFINE_string("out", None, "Output directory for figures and JSON.")
_MODEL = flags.DEFINE_list("model", None, "Hypernetworks to analyse (default: all).")
_SEED = flags.DEFINE_integer("seed_index", None,
                             "Seed to analyse (default: the validation-selected one).")
_ROWS = flags.DEFINE_enum("rows", "all", ["all", "valid"],
                          "Rows of W_E(p) in the global PCA (see clock.flatten_embeddings).")
flags.mark_flags_as_required(["workdir", "out"])


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Too many command-line arguments: {argv[1:]}")
  logging.set_verbosity(logging.WARNING)  # orbax restore logs at INFO
  result = report.analyze_workdir(_WORKDIR.value, _OUT.value, _MODEL.value,
                                  seed_index=_SEED.value, rows=_ROWS.value)
  print(report.markdown(result))


if __name__ == "__main__":
  app.run(main)
