"""ADDMOD-p on a deeper target: the paper's Transformer with 2 blocks instead of
1 (12,033 parameters); 4 meta-learners x 5 seeds, everything else as
`addmod.py` (OOD p in {23, 47, 61, 83, 89}, validation {53, 71}, 20,000 steps).

  python -m experiments.synthesize --config=experiments/configs/addmod_deep.py \
      --workdir=workdirs/addmod_deep

Meant for a GPU: not run at this length. On the 2-core CPU 5 seeds x 20,000
steps would take about 4 hours each for the direct model and Meta-GNN (1.4 and
1.5 steps/s). It inherits `addmod.py`'s settings, chosen at depth 1 on the
validation primes (Meta-GNN Muon at 2e-3 with a 500-step warm-up and the
intent's FiLM gain, Meta-MLP
Muon at 8e-3, Meta-gMLP Muon at 8e-3, direct Muon at 4e-3). `addmod_deep_cpu.py`,
this target at 2,500 steps, ran with the settings before Muon (Meta-GNN LAMB at
2e-3, Meta-MLP Adam at 2e-3, Meta-gMLP and direct Adam; its docstring; README,
"Targets beyond the paper's"):
OOD Meta-MLP 0.747 ± 0.102, Meta-gMLP 0.619 ± 0.107, Meta-GNN 0.645 ± 0.080;
it has not been re-run with Muon. Its runs at earlier settings are in BUILD_NOTES.md ("ADDMOD at
depth 1 and 2 on the CPU" and the sections after it).

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
    # d = 17 with `addmod.py`'s intent_film (391,071 parameters; 18 was the
    # match without it).
    "meta_gnn": {"d": 17},
}


def get_config():
  return loop.on_target(addmod.get_config(), SPEC, MODEL_CONFIGS, seeds=5)
