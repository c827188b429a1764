"""ADDMOD-p on a 2-layer Transformer on the 2-core CPU, the depth-2 row of the
depth comparison (issue 28): `addmod_deep.py`'s target and widths on
`addmod_cpu.py`'s protocol (5 seeds, 3,000 steps, everything else as
`addmod.py`).

  python -m experiments.synthesize --config=experiments/configs/addmod_deep_cpu.py \
      --workdir=workdirs/addmod_deep_cpu

The depth-1 row is `addmod_cpu.py`, run the same way; why 3,000 steps is in
its docstring.
"""

from experiments.configs import addmod_cpu
from experiments.configs import addmod_deep
from neuroprog.train import loop


def get_config():
  return loop.on_target(addmod_cpu.get_config(), addmod_deep.SPEC, addmod_deep.MODEL_CONFIGS)
