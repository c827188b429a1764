"""1D-ARC: parameterized families, reference solvers and the official format."""
from neuroprog.tasks.arc1d.families import MAX_LEN, PAD, reference
from neuroprog.tasks.arc1d.io import (ArcTask, encode, generate, intent_for,
                                      load, save)
from neuroprog.tasks.arc1d.task import PARAM_BUDGET, Arc1D, default_spec
