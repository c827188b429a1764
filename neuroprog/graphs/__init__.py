"""Neural graphs of target networks and their permutation symmetries."""
from neuroprog.graphs.neural_graph import (EDGE_PE_DIM, GROUPINGS, NODE_PE_DIM,
                                           BatchedNeuralGraph, Block,
                                           NeuralGraph, batch, neural_graph)
from neuroprog.graphs.symmetry import (random_automorphism,
                                       random_node_permutation,
                                       theta_permutation)
