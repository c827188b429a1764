"""Progressive neural architecture generation: train both PNAG stages, sample.

  python -m experiments.generate --config=experiments/configs/pnag_nb201.py \
      --workdir=workdirs/pnag_nb201 [--config.gen_steps=500]
"""

import json

from absl import app
from absl import flags
from absl import logging
from ml_collections import config_flags

from neuroprog.pnag import train

_WORKDIR = flags.DEFINE_string("workdir", None, "Directory for checkpoints and results.")
config_flags.DEFINE_config_file("config", None, "PNAG configuration file.",
                                lock_config=True)
flags.mark_flags_as_required(["config", "workdir"])


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Too many command-line arguments: {argv[1:]}")
  logging.set_verbosity(logging.WARNING)
  out = train.train_and_evaluate(flags.FLAGS.config, _WORKDIR.value)
  keys = ("validity", "uniqueness", "novelty", "expected_uniqueness_uniform",
          "samples_per_s", "heldout_reconstruction", "train_time_s")
  print(json.dumps({k: out[k] for k in keys}))


if __name__ == "__main__":
  app.run(main)
