"""The clock analysis of a trained ADDMOD workdir.

  python -m experiments.analyze_clock --workdir=workdirs/addmod --out=OUT \
      [--model=meta_gnn,meta_mlp] [--seed=S] [-v 0]

Writes OUT/analysis.json, clock_p83.png, clock_grid.png and pc1_vs_p.png and
prints a table. Without --model every hypernetwork of the workdir is analysed;
without --seed, each model's validation-selected seed. The pipeline is
`experiments.pipelines.clock_report.analyze_workdir`.
"""

from absl import app
from absl import flags

from experiments.pipelines import clock_report
from neuroprog.run import logs

_WORKDIR = flags.DEFINE_string("workdir", None, "A trained ADDMOD workdir.")
_OUT = flags.DEFINE_string("out", None, "Output directory for figures and JSON.")
_MODEL = flags.DEFINE_list("model", None, "Hypernetworks to analyse (default: all).")
_SEED = flags.DEFINE_integer("seed", None,
                             "Seed to analyse, a seed value of the run (default: the "
                             "validation-selected one).")
_ROWS = flags.DEFINE_enum("rows", "all", ["all", "valid"],
                          "Rows of W_E(p) in the global PCA (see clock.flatten_embeddings).")
flags.mark_flags_as_required(["workdir", "out"])


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Too many command-line arguments: {argv[1:]}")
  logs.setup_from_flags()
  result = clock_report.analyze_workdir(_WORKDIR.value, _OUT.value, _MODEL.value,
                                        seed=_SEED.value, rows=_ROWS.value)
  print(clock_report.markdown(result))


if __name__ == "__main__":
  app.run(main)
