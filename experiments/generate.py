"""Progressive neural architecture generation: train both PNAG stages, sample.

  python -m experiments.generate --config=experiments/configs/pnag_nb201.py \
      --workdir=workdirs/pnag_nb201 [--config.gen_steps=500 --extend] [-v 0]

Prints the headline metrics as one JSON line; everything is in
workdir/results.json (`neuroprog.pnag.train.train_and_evaluate`).
"""

import json

from absl import app
from absl import flags
from ml_collections import config_flags

from neuroprog.pnag import train
from neuroprog.run import logs

_WORKDIR = flags.DEFINE_string("workdir", None, "Directory for checkpoints and results.")
_EXTEND = flags.DEFINE_bool("extend", False,
                            "Continue the workdir's run with larger ae_steps / gen_steps.")
config_flags.DEFINE_config_file("config", None, "PNAG configuration file.",
                                lock_config=True)
flags.mark_flags_as_required(["config", "workdir"])


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Too many command-line arguments: {argv[1:]}")
  logs.setup_from_flags()
  out = train.train_and_evaluate(flags.FLAGS.config, _WORKDIR.value, extend=_EXTEND.value)
  keys = ("validity", "uniqueness", "novelty", "expected_uniqueness_uniform",
          "samples_per_s", "heldout_reconstruction", "train_time_s")
  print(json.dumps({k: out[k] for k in keys}))


if __name__ == "__main__":
  app.run(main)
