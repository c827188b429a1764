"""neuroprog: synthesize neural networks in weight space, in JAX.

Public API (top level): specs and the tasks' default ones, the θ layout,
`execute`, neural graphs and their symmetries, and synthesis from a trained
workdir or from parameters in memory. The two systems live in subpackages:
weight-space synthesis in `specs`, `programs`, `graphs`, `tasks`, `meta`,
`train`, `analysis`; architecture generation in `pnag`; both share `run`
(docs/ARCHITECTURE.md).

The top-level names are loaded on first use, so that `import neuroprog.pnag`
does not import the weight-synthesis stack.
"""

import importlib

__version__ = "0.1.0"

# name -> the module that defines it.
_EXPORTS = {
    "MLPSpec": "neuroprog.specs",
    "TransformerSpec": "neuroprog.specs",
    "Seq2SeqSpec": "neuroprog.specs",
    "CNNSpec": "neuroprog.specs",
    "default_spec": "neuroprog.tasks",
    "execute": "neuroprog.programs",
    "flatten": "neuroprog.programs",
    "unflatten": "neuroprog.programs",
    "init_theta": "neuroprog.programs",
    "num_params": "neuroprog.programs",
    "layout": "neuroprog.programs.layout",
    "NeuralGraph": "neuroprog.graphs",
    "neural_graph": "neuroprog.graphs",
    "random_automorphism": "neuroprog.graphs",
    "synthesize": "neuroprog.synthesis",
    "synthesize_from_params": "neuroprog.synthesis",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
  if name in _EXPORTS:
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value
  raise AttributeError(f"module 'neuroprog' has no attribute {name!r}")


def __dir__():
  return sorted(set(globals()) | set(_EXPORTS))
