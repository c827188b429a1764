"""Conditional PNAG search on NAS-Bench-201 (surrogate-guided, leave-one-dataset-out).

  python -m experiments.search --config=experiments/configs/pnag_nb201_cond.py \
      --workdir=workdirs/pnag_nb201_cond
"""

from absl import app
from absl import flags
from absl import logging
from ml_collections import config_flags

from neuroprog.pnag import search

_WORKDIR = flags.DEFINE_string("workdir", None, "Directory for checkpoints and results.")
config_flags.DEFINE_config_file("config", None, "Conditional PNAG configuration file.",
                                lock_config=True)
flags.mark_flags_as_required(["config", "workdir"])


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Too many command-line arguments: {argv[1:]}")
  logging.set_verbosity(logging.WARNING)
  print(search.markdown(search.run(flags.FLAGS.config, _WORKDIR.value)))


if __name__ == "__main__":
  app.run(main)
