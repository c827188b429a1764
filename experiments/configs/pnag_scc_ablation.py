"""The SCC ablation on NAS-Bench-201 (the PNAG paper's Figure 3): the
pnag_nb201 setup (sub-architecture scales of 3, 4, ..., 8 nodes) with the
step-wise consistency terms on the first t of the 6 scales, t = 0..6, three
seeds each, 1,000 samples per run, plain decoding; the table gives the
validity of the final architectures and of every intermediate scale.

  python -m experiments.scc_ablation --config=experiments/configs/pnag_scc_ablation.py \
      --workdir=workdirs/scc_ablation

Not yet run in full on this schedule: 21 trainings of about 7 minutes each on the 2-core
CPU (resumable; each run in its own workdir). One run so far (t = 0, seed 0, with one
generation step per scale, 2026-12-02): without SCC the intermediate scales do not decode to
sub-architectures (held-out reconstruction per scale 0 / 19 / 86 / 40 / 0 / 100%, samples valid
per scale 0 / 12 / 61 / 51 / 4 / 99.5%): BUILD_NOTES.md, "PNAG with new-entry tokens". The
pyramid-era ablation (scales 1, 2, 4, 8; one seed; 2026-11-30) found no clear effect:
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
