"""neuroprog: synthesize neural networks in weight space, in JAX.

Public API (top level): specs and their defaults, the θ layout, `execute`,
neural graphs and their symmetries.
"""
from neuroprog.graphs import (BatchedNeuralGraph, NeuralGraph, neural_graph,
                              random_automorphism)
from neuroprog.programs import (execute, flatten, init_theta,
                                num_params, unflatten)
from neuroprog.programs.layout import layout
from neuroprog.synthesis import synthesize
from neuroprog.specs import (MLPSpec, Seq2SeqSpec, TransformerSpec,
                             default_spec)

__version__ = "0.1.0"
