"""Multi-seed meta-training and evaluation of the meta-learners.

  python -m experiments.synthesize --config=experiments/configs/sumfirst.py \
      --workdir=workdirs/sumfirst [--config.seeds=4]
"""

from absl import app
from absl import flags
from absl import logging
from ml_collections import config_flags

from neuroprog.train import loop, results

_WORKDIR = flags.DEFINE_string("workdir", None, "Directory for checkpoints and results.")
config_flags.DEFINE_config_file("config", None, "Training configuration file.",
                                lock_config=True)
flags.mark_flags_as_required(["config", "workdir"])


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Too many command-line arguments: {argv[1:]}")
  # Progress lines come from the "neuroprog" logger; keep orbax's INFO quiet.
  logging.set_verbosity(logging.WARNING)
  out = loop.train_and_evaluate(flags.FLAGS.config, _WORKDIR.value)
  print(results.markdown_table(out, loop.build_task(flags.FLAGS.config)))


if __name__ == "__main__":
  app.run(main)
