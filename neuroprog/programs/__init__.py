"""Target programs: the θ layout and `execute` for each spec family."""
from neuroprog.programs.executor import execute
from neuroprog.programs.layout import (Entry, flatten, init_std_vector,
                                       init_theta, num_params, unflatten)
