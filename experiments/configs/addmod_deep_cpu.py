"""ADDMOD-p on a 2-layer Transformer on the 2-core CPU, the depth-2 row of the
depth comparison (issue 28): `addmod_deep.py`'s target and widths on
`addmod_cpu.py`'s protocol (5 seeds, 2,500 steps, everything else as
`addmod.py`).

  python -m experiments.synthesize --config=experiments/configs/addmod_deep_cpu.py \
      --workdir=workdirs/addmod_deep_cpu

The depth-1 row is `addmod_cpu.py`, run the same way; why 2,500 steps is in
its docstring. The direct baseline is not trained here: it maps (intent,
input) to the output with no target network, so the target's depth does not
enter it, and `addmod_cpu.py`'s direct run (same seeds, data and width) is its
row at both depths. At 5 seeds it is the costliest model (1.4 steps/s,
`addmod_cpu.py`'s docstring), so training it twice would not fit the session.

Measured (commit 0fe2ef0, 2-core AMD EPYC, 2026-12-02, 34 min wall): OOD mean
± std Meta-MLP 0.749 ± 0.081, Meta-gMLP 0.288 ± 0.087, Meta-GNN 0.235 ±
0.088; ID 0.972 / 0.661 / 0.610. Those figures are Meta-GNN at the recipe's
rate 3e-4; from commit a312fdc every ADDMOD config (this one through
`addmod.py`) gave Meta-GNN 1e-3, and from the forty-seventh session a
1,000-step warm-up, both chosen on the validation primes at depth 1
(`addmod.py`). With them, Meta-GNN alone (`--config.models="('meta_gnn',)"`,
commit c3e82e0, 2-core Intel Xeon AVX-512, 2026-12-05, 12.8 min of
training): ID 0.903 ± 0.050, OOD 0.624 ± 0.086. Since the forty-eighth
session the rate is 4e-3 (chosen at depth 1): with the 1,000-step warm-up,
Meta-GNN alone, commit bf20d67, same host, 14.6 min of training: ID 0.968 ±
0.023, val 0.736 ± 0.071, OOD 0.675 ± 0.067. With the 2,000-step warm-up
chosen after (the config until the fiftieth session), Meta-GNN alone, commit 974988c, same host,
2026-12-06, 19.3 min of training on a slower hour: ID 0.947 ± 0.040, val
0.705 ± 0.076, OOD 0.648 ± 0.078.
Since the fiftieth session it inherits `addmod.py`'s newer settings, chosen at
depth 1 on the validation primes: Meta-GNN with pre-norm rounds at 8e-3 (its
warm-up 1,000 steps since the fifty-second session), Meta-MLP at 2e-3,
Meta-gMLP at 8e-3 and the direct model at 4e-3; the figures above predate
them, and this depth has not been run with them.
"""

from experiments.configs import addmod_cpu
from experiments.configs import addmod_deep
from neuroprog.train import loop


def get_config():
  hypernetworks = {k: v for k, v in addmod_deep.MODEL_CONFIGS.items() if k != "direct"}
  return loop.on_target(addmod_cpu.get_config(), addmod_deep.SPEC, hypernetworks)
