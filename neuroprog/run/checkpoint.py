"""Checkpoints with orbax: save every N steps, keep the last K, resume.

A corrupt or unreadable latest checkpoint falls back to the previous one with
a warning; if none can be read, `restore_latest` raises naming the directory.
"""

from __future__ import annotations

import os
from typing import Any, Optional

import logging
import jax
import orbax.checkpoint as ocp

logger = logging.getLogger("neuroprog")


def manager(directory: str, keep: int) -> ocp.CheckpointManager:
  """A CheckpointManager on `directory` (made absolute), keeping `keep`."""
  options = ocp.CheckpointManagerOptions(max_to_keep=keep, create=True)
  return ocp.CheckpointManager(os.path.abspath(directory), options=options)


def save(mngr: ocp.CheckpointManager, step: int, state: Any) -> None:
  mngr.save(step, args=ocp.args.StandardSave(state), force=True)
  mngr.wait_until_finished()


def restore_latest(mngr: ocp.CheckpointManager, abstract_state: Any
                   ) -> tuple[Optional[int], Any]:
  """(step, state) from the newest readable checkpoint, or (None, None).

  abstract_state: a pytree of jax.ShapeDtypeStruct (with shardings) giving
  the structure, shapes and placement to restore into.
  """
  steps = sorted(mngr.all_steps(), reverse=True)
  if not steps:
    return None, None
  errors = []
  for step in steps:
    try:
      state = mngr.restore(step, args=ocp.args.StandardRestore(abstract_state))
      if errors:
        logger.warning("Resumed from checkpoint %d of %s after skipping "
                        "unreadable ones: %s", step, mngr.directory, errors)
      return step, state
    except Exception as e:  # pylint: disable=broad-except
      logger.warning("Checkpoint %d in %s is unreadable (%s: %.200s); trying "
                     "the previous one.", step, mngr.directory,
                     type(e).__name__, str(e))
      errors.append(f"step {step}: {type(e).__name__}")
  raise RuntimeError(
      f"No readable checkpoint in {mngr.directory} (tried steps {steps}: "
      f"{errors}). Remove the directory to start afresh.")


def abstract_like(tree: Any) -> Any:
  """ShapeDtypeStructs (keeping shardings) mirroring a pytree of arrays."""
  return jax.tree_util.tree_map(
      lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype,
                                     sharding=getattr(a, "sharding", None)), tree)
