"""The SCC ablation: PNAG trained with step-wise consistency on 0..T scales.

  python -m experiments.scc_ablation --config=experiments/configs/pnag_scc_ablation.py \
      --workdir=workdirs/scc_ablation
"""

from absl import app
from absl import flags
from absl import logging
from ml_collections import config_flags

from neuroprog.pnag import ablation

_WORKDIR = flags.DEFINE_string("workdir", None, "Directory for the runs and results.")
config_flags.DEFINE_config_file("config", None, "PNAG ablation configuration file.",
                                lock_config=True)
flags.mark_flags_as_required(["config", "workdir"])


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Too many command-line arguments: {argv[1:]}")
  logging.set_verbosity(logging.WARNING)
  print(ablation.markdown(ablation.run(flags.FLAGS.config, _WORKDIR.value)))


if __name__ == "__main__":
  app.run(main)
