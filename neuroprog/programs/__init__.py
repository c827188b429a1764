"""Target programs: the θ layout and `execute` for each spec family."""
from neuroprog.programs.executor import execute
from neuroprog.programs.layout import flatten, init_theta, num_params, unflatten
