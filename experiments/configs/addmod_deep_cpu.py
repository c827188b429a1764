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

Measured with the settings before Muon, inherited from `addmod.py` and
chosen at depth 1 on the validation primes (Meta-GNN LAMB at 2e-3 with a
1,000-step warm-up, Meta-MLP Adam at 2e-3, Meta-gMLP 8e-3; since the
fifty-fifth session `addmod.py` gives Meta-GNN and Meta-MLP Muon, and since
the fifty-eighth Meta-GNN the intent's FiLM gain, not yet run at depth 2): commit c4613c6's code,
2-core Intel Xeon AVX-512, 2026-12-06 14:19-14:38 UTC, 19 min wall for the
three, Meta-GNN re-run alone after LAMB was chosen (`--config.models=
"('meta_gnn',)"`, commit 5d9d7d1, 887 s of training). ID / val / OOD mean ± std

  meta_mlp   0.987 / 0.857 / 0.747 ± 0.102
  meta_gmlp  0.922 / 0.701 / 0.619 ± 0.107
  meta_gnn   0.952 / 0.727 / 0.645 ± 0.080 (Adam at 8e-3: 0.964 / 0.724 /
             0.648 ± 0.083)

against depth 1's 0.803 / 0.579 / 0.630 (`addmod_cpu.py`) and the heuristic
"a + b, never wrap" at 0.509 on the same samples. README ("Targets beyond the
paper's") has the table; the earlier runs of this config, at the settings
before, are in BUILD_NOTES.md ("ADDMOD at depth 1 and 2 on the CPU" and the
sections after it).
"""

from experiments.configs import addmod_cpu
from experiments.configs import addmod_deep
from neuroprog.train import loop


def get_config():
  hypernetworks = {k: v for k, v in addmod_deep.MODEL_CONFIGS.items() if k != "direct"}
  return loop.on_target(addmod_cpu.get_config(), addmod_deep.SPEC, hypernetworks)
