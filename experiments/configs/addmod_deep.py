"""ADDMOD-p on a deeper target: the paper's Transformer with 2 blocks instead of
1 (12,033 parameters); 4 meta-learners x 5 seeds, everything else as
`addmod.py` (OOD p in {23, 47, 61, 83, 89}, validation {53, 71}, 20,000 steps).

  python -m experiments.synthesize --config=experiments/configs/addmod_deep.py \
      --workdir=workdirs/addmod_deep

Meant for a GPU: not run at this length. On the 2-core CPU 5 seeds x 20,000
steps would take about 4 hours each for the direct model and Meta-GNN (1.4 and
1.5 steps/s); `addmod_deep_cpu.py` is this target at 2,500 steps, measured
(README, "Depth"): OOD Meta-MLP 0.749 ± 0.081, Meta-gMLP 0.288 ± 0.087,
Meta-GNN 0.235 ± 0.088, direct 0.348 ± 0.059 (its depth-1 run), with Meta-GNN
at 3e-4; with `addmod.py`'s earlier 1e-3 and its 1,000-step warm-up,
`addmod_deep_cpu.py`'s Meta-GNN reads OOD 0.624 ± 0.086. It now inherits
`addmod.py`'s 4e-3 (forty-eighth session), with which (and the 1,000-step
warm-up) `addmod_deep_cpu.py`'s Meta-GNN reads OOD 0.675 ± 0.067, and with
the 2,000-step warm-up chosen after that 0.648 ± 0.078.
Since the fiftieth session it inherits `addmod.py`'s newer settings, chosen at
depth 1 on the validation primes: Meta-GNN with pre-norm rounds at 8e-3 (its
warm-up 1,000 steps since the fifty-second session), Meta-MLP at 2e-3,
Meta-gMLP at 8e-3 and the direct model at 4e-3; the figures above predate
them. `addmod_deep_cpu.py` ran with them in the fifty-third session (its
docstring): OOD Meta-MLP 0.747 ± 0.102, Meta-gMLP 0.619 ± 0.107, Meta-GNN
0.648 ± 0.083; this 20,000-step config has not been run.

Widths re-matched to the 400,000-parameter budget for this target
(`neuroprog.train.loop.matched_model_configs("addmod", spec=...)`).
"""

from experiments.configs import addmod
from neuroprog.train import loop

SPEC = {"type": "TransformerSpec", "vocab_size": 98, "seq_len": 3, "d_model": 16,
        "n_heads": 4, "d_mlp": 48, "n_classes": 97, "n_layers": 2, "ln": "pre",
        "activation": "relu"}
MODEL_CONFIGS = {
    "direct": {"d_model": 152},
    "meta_mlp": {"hidden": 44},
    "meta_gmlp": {"hidden": 4},
    "meta_gnn": {"d": 18},
}


def get_config():
  return loop.on_target(addmod.get_config(), SPEC, MODEL_CONFIGS, seeds=5)
