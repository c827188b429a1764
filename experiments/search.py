"""Conditional PNAG search on NAS-Bench-201 (surrogate-guided, leave-one-dataset-out).

  python -m experiments.search --config=experiments/configs/pnag_nb201_cond.py \
      --workdir=workdirs/pnag_nb201_cond [--extend] [-v 0]

The pipeline is `experiments.pipelines.search.run`.
"""

from absl import app
from absl import flags
from ml_collections import config_flags

from experiments.pipelines import search
from neuroprog.run import logs

_WORKDIR = flags.DEFINE_string("workdir", None, "Directory for checkpoints and results.")
_EXTEND = flags.DEFINE_bool("extend", False, "Continue the workdir's run with more steps.")
config_flags.DEFINE_config_file("config", None, "Conditional PNAG configuration file.",
                                lock_config=True)
flags.mark_flags_as_required(["config", "workdir"])


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Too many command-line arguments: {argv[1:]}")
  logs.setup_from_flags()
  print(search.markdown(search.run(flags.FLAGS.config, _WORKDIR.value, extend=_EXTEND.value)))


if __name__ == "__main__":
  app.run(main)
