"""The SCC ablation on NAS-Bench-201 (the PNAG paper's Figure 3): the
pnag_nb201 setup (sub-architecture scales of 3, 4, ..., 8 nodes) with the
step-wise consistency terms on the first t of the 6 scales, t = 0..6, three
seeds each, 1,000 samples per run, plain decoding; the table gives the
validity of the final architectures and of every intermediate scale.

  python -m experiments.scc_ablation --config=experiments/configs/pnag_scc_ablation.py \
      --workdir=workdirs/scc_ablation

Measured in full (2-core CPU, 2026-12-02, code of commit d6a1751, 21 trainings beside other
runs): final validity 99.2-100% in every setting, with or without SCC; each setting makes
valid the intermediate scales it covers (without SCC 45 / 51 / 81 / 9 / 0% valid at
n = 3..7; with SCC on all scales 99.9-100% at every scale). Table and figure: README.md ("The
SCC ablation"); BUILD_NOTES.md ("SCC ablation on sub-architecture scales"). The pyramid-era
ablation (scales 1, 2, 4, 8; one seed; 2026-11-30) found no clear effect either:
BUILD_NOTES.md, "SCC ablation".
"""

from experiments.configs import pnag_nb201


def get_config():
  c = pnag_nb201.get_config()
  c.scc_settings = None      # None: 0, 1, ..., len(scales)
  c.scc_seeds = (0, 1, 2)
  c.gen_steps = 1000
  c.decode = "argmax"        # measure the generator: constrained decoding is always valid
  return c
