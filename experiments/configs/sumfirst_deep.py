"""SUMFIRST-n on a deeper target: the MLP 10-16-16-1 (two hidden layers) in place
of the paper's 10-16-1; 4 meta-learners x 5 seeds, everything else as
`sumfirst.py` (OOD n in {4, 8}, validation n = 6, 6,000 steps).

  python -m experiments.synthesize --config=experiments/configs/sumfirst_deep.py \
      --workdir=workdirs/sumfirst_deep

The same target from the command line on any SUMFIRST config:
  --config.spec='{"type": "MLPSpec", "widths": [10, 16, 16, 1]}'

Widths are re-matched to the 50,000-parameter budget for this target
(`meta.match_capacity`; the hypernetworks' heads emit 465 weights instead of
193). Meta-GNN keeps the task-specific settings of `sumfirst.py`, chosen on
validation at depth 1 and not re-tuned here, so nothing was chosen on the deep
target's results. Measured results: BUILD_NOTES.md, "Deeper targets".
"""

from experiments.configs import sumfirst
from neuroprog.train import loop

SPEC = {"type": "MLPSpec", "widths": (10, 16, 16, 1), "activation": "relu"}
# neuroprog.meta.match_capacity(..., spec=MLPSpec((10, 16, 16, 1)), 50_000,
# base_configs=<the task-specific Meta-GNN settings>); tests/test_configs.py
# re-checks the 10% match.
MODEL_CONFIGS = {
    "direct": {"hidden": 217},
    "meta_mlp": {"hidden": 89},
    "meta_gmlp": {"hidden": 12},
    "meta_gnn": {**sumfirst.MODEL_CONFIGS["meta_gnn"], "d": 22},
}


def get_config():
  return loop.on_target(sumfirst.get_config(), SPEC, MODEL_CONFIGS, seeds=5)
