"""1D-ARC: parameterized families, reference solvers and the official format."""
from neuroprog.tasks.arc1d.families import (DEFAULT_OOD, FAMILIES, MAX_LEN,
                                            PAD, PARAM_DOMAIN, check_grid,
                                            generate_one, reference)
from neuroprog.tasks.arc1d.io import (ArcTask, encode, generate, intent_for,
                                      load, save)
from neuroprog.tasks.arc1d.task import Arc1D
