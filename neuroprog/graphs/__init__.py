"""Neural graphs of target networks and their permutation symmetries."""
from neuroprog.graphs.neural_graph import (DEFAULT_PE_FEATURES, EDGE_PE_DIM,
                                           GROUPINGS, NODE_PE_DIM, NeuralGraph,
                                           neural_graph, pe_columns)
from neuroprog.graphs.symmetry import random_automorphism
