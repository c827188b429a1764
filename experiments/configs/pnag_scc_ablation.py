"""The SCC ablation on NAS-Bench-201 (the PNAG paper's Figure 3): the
pnag_nb201 setup with step-wise consistency on the first t of the 4 scales,
t = 0..4, 1,000 samples each.

  python -m experiments.scc_ablation --config=experiments/configs/pnag_scc_ablation.py \
      --workdir=workdirs/scc_ablation

2-core CPU, 2026-11-30: 53 min (rerun, sharing the cores with another
training job; 72 min in a first run beside three jobs). Expected
results: validity 98.8-99.2%, uniqueness 85.0-88.2%, novelty 48.6-53.2%,
held-out reconstruction 100% for every t (no clear effect of SCC here).
"""

from experiments.configs import pnag_nb201


def get_config():
  c = pnag_nb201.get_config()
  c.scc_settings = None      # None: 0, 1, ..., len(scales)
  c.gen_steps = 1500
  c.decode = "argmax"        # measure the generator: constrained decoding is always valid
  return c
