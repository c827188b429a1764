"""Progressive neural architecture generation (PNAG).

spaces: NB201 / MBV3 / DARTS in the op-on-node encoding; autoencoder: graph
encoder + multi-scale quantizer + decoder (stage 1); generator: AdaLN
next-scale transformer (stage 2); model: the trained bundle and the jitted
sampler; metrics: validity, uniqueness, novelty; train: both stages end to end.
Conditional (import explicitly): data (NAS-Bench-201 tables), surrogate (the
meta-learned accuracy predictor), search (the pieces of guided generation and
search). The search and SCC-ablation experiments are in experiments/pipelines.
PNAG depends on nothing of neuroprog but `neuroprog.run`.
"""

from neuroprog.pnag import metrics, msq, spaces
from neuroprog.pnag.model import PNAG, Samples, sample

__all__ = ["PNAG", "Samples", "sample", "metrics", "msq", "spaces"]
