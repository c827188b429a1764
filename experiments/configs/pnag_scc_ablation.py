"""The SCC ablation on NAS-Bench-201 (the PNAG paper's Figure 3): the
pnag_nb201 setup with step-wise consistency on the first t of the 4 scales,
t = 0..4, 1,000 samples each.

  python -m experiments.scc_ablation --config=experiments/configs/pnag_scc_ablation.py \
      --workdir=workdirs/scc_ablation

Run time and results: BUILD_NOTES.md ("SCC ablation").
"""

from experiments.configs import pnag_nb201


def get_config():
  c = pnag_nb201.get_config()
  c.scc_settings = None      # None: 0, 1, ..., len(scales)
  c.gen_steps = 1500
  return c
