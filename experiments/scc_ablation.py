"""The SCC ablation: PNAG trained with step-wise consistency on 0..T scales.

  python -m experiments.scc_ablation --config=experiments/configs/pnag_scc_ablation.py \
      --workdir=workdirs/scc_ablation [-v 0]
  python -m experiments.scc_ablation --workdir=workdirs/scc_ablation --report_only

`--report_only` rebuilds the table and figure from the finished runs' results
(no training; no --config needed).

The pipeline is `experiments.pipelines.scc_ablation.run`.
"""

from absl import app
from absl import flags
from ml_collections import config_flags

from experiments.pipelines import scc_ablation
from neuroprog.run import logs

_WORKDIR = flags.DEFINE_string("workdir", None, "Directory for the runs and results.")
config_flags.DEFINE_config_file("config", None, "PNAG ablation configuration file.",
                                lock_config=True)
_REPORT = flags.DEFINE_bool("report_only", False, "Only rebuild results.json, results.md and "
                            "the figure from the finished runs.")
flags.mark_flags_as_required(["workdir"])


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Too many command-line arguments: {argv[1:]}")
  logs.setup_from_flags()
  if _REPORT.value:
    print(scc_ablation.markdown(scc_ablation.report(_WORKDIR.value)))
    return
  if flags.FLAGS.config is None:
    raise app.UsageError("--config is required (unless --report_only).")
  print(scc_ablation.markdown(scc_ablation.run(flags.FLAGS.config, _WORKDIR.value)))


if __name__ == "__main__":
  app.run(main)
