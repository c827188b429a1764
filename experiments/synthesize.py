"""Multi-seed meta-training and evaluation of the meta-learners.

  python -m experiments.synthesize --config=experiments/configs/sumfirst.py \
      --workdir=workdirs/sumfirst [--config.seeds=4] [--host_devices=2] \
      [--config.steps=N --extend] [-v 0]

--host_devices N splits the CPU into N JAX devices (`jax_num_cpu_devices`),
over which the seed axis is then sharded as over N accelerators: on a
multi-core CPU many seeds train faster that way (README, "Many seeds, many
devices"). It leaves GPU and TPU devices alone. --extend continues a workdir's
run for a larger `steps`; any other changed key is refused. -v 0 shows absl
and orbax INFO records.
"""

from absl import app
from absl import flags
import jax
from ml_collections import config_flags

from neuroprog.run import logs
from neuroprog.train import loop, results

_WORKDIR = flags.DEFINE_string("workdir", None, "Directory for checkpoints and results.")
config_flags.DEFINE_config_file("config", None, "Training configuration file.",
                                lock_config=True)
_HOST_DEVICES = flags.DEFINE_integer(
    "host_devices", None, "Split the CPU into this many JAX devices.", lower_bound=1)
_EXTEND = flags.DEFINE_bool("extend", False, "Continue the workdir's run for more steps.")
flags.mark_flags_as_required(["config", "workdir"])


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Too many command-line arguments: {argv[1:]}")
  logs.setup_from_flags()
  if _HOST_DEVICES.value:   # before any JAX operation starts the CPU backend
    jax.config.update("jax_num_cpu_devices", _HOST_DEVICES.value)
  out = loop.train_and_evaluate(flags.FLAGS.config, _WORKDIR.value, extend=_EXTEND.value)
  print(results.markdown_table(out, loop.build_task(flags.FLAGS.config)))


if __name__ == "__main__":
  app.run(main)
