"""Logging: library modules log to the "neuroprog" logger; entry points set it up.

Importing neuroprog configures nothing (a notebook or a host program keeps its
own logging). An entry point calls `setup(verbose)`: progress lines of the
"neuroprog" logger go to stderr with a time stamp, and the INFO records of
absl and orbax (orbax logs a dict per checkpoint restore) are shown only when
`verbose` is true. Without setup, Python's last-resort handler still prints
warnings and errors.
"""

from __future__ import annotations

import logging
import sys

logger = logging.getLogger("neuroprog")

_HANDLER_NAME = "neuroprog.run.logs"
_NOISY = ("absl", "orbax", "jax._src.xla_bridge")


def setup(verbose: bool = False) -> logging.Logger:
  """Progress to stderr; absl/orbax INFO only when `verbose`. Idempotent."""
  if not any(getattr(h, "name", None) == _HANDLER_NAME for h in logger.handlers):
    handler = logging.StreamHandler(sys.stderr)
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
    logger.addHandler(handler)
  logger.setLevel(logging.INFO)
  logger.propagate = False
  level = logging.INFO if verbose else logging.WARNING
  for name in _NOISY:
    logging.getLogger(name).setLevel(level)
  try:
    from absl import logging as absl_logging  # pylint: disable=g-import-not-at-top
    absl_logging.set_verbosity(absl_logging.INFO if verbose else absl_logging.WARNING)
  except ImportError:
    pass
  return logger


def setup_from_flags() -> logging.Logger:
  """`setup` for absl entry points: verbose when --verbosity (-v) was given."""
  from absl import flags  # pylint: disable=g-import-not-at-top
  flag = flags.FLAGS["verbosity"]
  return setup(verbose=bool(flag.present) and flag.value >= 0)
