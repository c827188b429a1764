"""Generation to a requested cost (MACs) in MBV3 or DARTS, against rejection sampling.

  python -m experiments.generate_to_cost --config=experiments/configs/pnag_mbv3_cost.py \
      --workdir=workdirs/pnag_mbv3_cost [--extend] [-v 0]

The pipeline is `experiments.pipelines.generate_to_cost.run`; prints results.md.
"""

from absl import app
from absl import flags
from ml_collections import config_flags

from experiments.pipelines import generate_to_cost
from neuroprog.run import logs

_WORKDIR = flags.DEFINE_string("workdir", None, "Directory for checkpoints and results.")
_EXTEND = flags.DEFINE_bool("extend", False, "Continue the workdir's run with more steps.")
config_flags.DEFINE_config_file("config", None, "Generate-to-cost configuration file.",
                                lock_config=True)
flags.mark_flags_as_required(["config", "workdir"])


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Too many command-line arguments: {argv[1:]}")
  logs.setup_from_flags()
  out = generate_to_cost.run(flags.FLAGS.config, _WORKDIR.value, extend=_EXTEND.value)
  print(generate_to_cost.markdown(out))


if __name__ == "__main__":
  app.run(main)
