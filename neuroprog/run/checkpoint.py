"""Checkpoints with orbax: save every N steps, keep the last K, resume.

A corrupt or unreadable latest checkpoint falls back to the previous one with
a warning; if none can be read, `restore_latest` raises naming the directory.
A checkpoint whose arrays have other shapes than the state being restored
(a workdir written by a version of the code that built another model from the
same config) is refused before any restore, naming the arrays that differ.
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
  # The handler is named up front because a manager that has not saved yet (a
  # resume in a new process) cannot read a checkpoint's metadata without it,
  # and the shape check of `restore_latest` reads that metadata first.
  return ocp.CheckpointManager(os.path.abspath(directory), options=options,
                               item_handlers=ocp.StandardCheckpointHandler())


def save(mngr: ocp.CheckpointManager, step: int, state: Any) -> None:
  mngr.save(step, args=ocp.args.StandardSave(state), force=True)
  mngr.wait_until_finished()


def restore_at(mngr: ocp.CheckpointManager, step: int, abstract_state: Any) -> Any:
  """The state saved at `step` (one of mngr.all_steps()), restored into the
  structure, shapes and placement of abstract_state (as `restore_latest`)."""
  return mngr.restore(step, args=ocp.args.StandardRestore(abstract_state))


def restore_latest(mngr: ocp.CheckpointManager, abstract_state: Any
                   ) -> tuple[Optional[int], Any]:
  """(step, state) from the newest readable checkpoint, or (None, None).

  abstract_state: a pytree of jax.ShapeDtypeStruct (with shardings) giving
  the structure, shapes and placement to restore into.
  """
  steps = sorted(mngr.all_steps(), reverse=True)
  if not steps:
    return None, None
  for step in steps:   # the newest checkpoint whose metadata reads
    saved = _saved_shapes(mngr, step)
    if saved is not None:
      diffs = shape_mismatches(saved, abstract_state)
      if diffs:
        raise ValueError(
            f"Checkpoint {step} in {mngr.directory} does not match the state this "
            f"code builds from the run's config ({len(diffs)} arrays differ, e.g. "
            f"{'; '.join(diffs[:4])}). It was written by a version of neuroprog "
            "whose model had other shapes: retrain (remove the directory), or load "
            "it with the code that wrote it.")
      break
  errors = []
  for step in steps:
    try:
      state = restore_at(mngr, step, abstract_state)
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


def _path_name(path) -> str:
  parts = []
  for k in path:
    for attr in ("key", "name", "idx"):
      if hasattr(k, attr):
        parts.append(str(getattr(k, attr)))
        break
  return "/".join(parts)


def _saved_shapes(mngr: ocp.CheckpointManager, step: int) -> Optional[dict]:
  """{array path: shape} stored in checkpoint `step`, or None if unreadable."""
  try:
    tree = mngr.item_metadata(step).tree
  except Exception:  # pylint: disable=broad-except
    return None
  shapes = {}
  for path, leaf in jax.tree_util.tree_leaves_with_path(tree):
    shape = getattr(leaf, "shape", None)
    if shape is not None:
      shapes[_path_name(path)] = tuple(shape)
  return shapes or None


def shape_mismatches(saved_shapes: dict, abstract_state: Any) -> list[str]:
  """Human-readable differences between saved {path: shape} and a pytree.

  Paths are slash-joined keys, attribute names and indices ('opt/0/mu/w'),
  the same for a saved tree and the live one. Empty when they agree."""
  want = {_path_name(p): tuple(leaf.shape)
          for p, leaf in jax.tree_util.tree_leaves_with_path(abstract_state)
          # typed PRNG keys are stored with their key data's shape
          if hasattr(leaf, "shape")
          and not jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key)}
  diffs = [f"{k}: saved {saved_shapes[k]}, expected {want[k]}"
           for k in sorted(want) if k in saved_shapes and saved_shapes[k] != want[k]]
  diffs += [f"{k}: missing from the checkpoint" for k in sorted(want) if k not in saved_shapes]
  return diffs


def abstract_like(tree: Any) -> Any:
  """ShapeDtypeStructs (keeping shardings) mirroring a pytree of arrays."""
  return jax.tree_util.tree_map(
      lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype,
                                     sharding=getattr(a, "sharding", None)), tree)
