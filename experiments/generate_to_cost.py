"""Generation to a requested cost (MACs) in MBV3 or DARTS, against rejection sampling.

  python -m experiments.generate_to_cost --config=experiments/configs/pnag_mbv3_cost.py \
      --workdir=workdirs/pnag_mbv3_cost [--extend] [-v 0]
  python -m experiments.generate_to_cost --config=... --workdir=... --select_guidance=1,2,3,4

The pipeline is `experiments.pipelines.generate_to_cost.run`; prints results.md.
With --select_guidance it trains or resumes both stages and scores each
guidance scale on the validation requests only (`select_guidance`), writing
guidance_selection.md; then `--config.guidance=G` on the same workdir
evaluates the reported requests with the chosen scale without retraining.
"""

from absl import app
from absl import flags
from ml_collections import config_flags

from experiments.pipelines import generate_to_cost
from neuroprog.run import logs

_WORKDIR = flags.DEFINE_string("workdir", None, "Directory for checkpoints and results.")
_EXTEND = flags.DEFINE_bool("extend", False, "Continue the workdir's run with more steps.")
_SELECT = flags.DEFINE_list("select_guidance", None,
                            "Guidance scales to score on the validation requests "
                            "(no reported request is evaluated).")
config_flags.DEFINE_config_file("config", None, "Generate-to-cost configuration file.",
                                lock_config=True)
flags.mark_flags_as_required(["config", "workdir"])


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Too many command-line arguments: {argv[1:]}")
  logs.setup_from_flags()
  if _SELECT.value:
    try:
      scales = [float(g) for g in _SELECT.value]
    except ValueError:
      raise app.UsageError(f"--select_guidance={','.join(_SELECT.value)}: "
                           "allowed: comma-separated positive numbers.") from None
    generate_to_cost.select_guidance(flags.FLAGS.config, _WORKDIR.value, scales)
    with open(f"{_WORKDIR.value}/guidance_selection.md") as f:
      print(f.read())
    return
  out = generate_to_cost.run(flags.FLAGS.config, _WORKDIR.value, extend=_EXTEND.value)
  print(generate_to_cost.markdown(out))


if __name__ == "__main__":
  app.run(main)
