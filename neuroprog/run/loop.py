"""The resumable chunked training loop shared by every trainer.

    chunk = scan_chunks(step_fn)     # step_fn(state, step) -> (state, metrics)
    result = train_loop("stage1", state, chunk, total=1000, log_every=100,
                        checkpoint_every=500, manager=mngr, writer=writer)

`train_loop` runs `chunk(state, start, n)` for n <= `log_every` steps at a
time (one jitted `lax.scan` per distinct n), so Python is entered once per
chunk, and after each chunk: stops on a non-finite loss (naming the step, and
the seed when metrics carry a seed axis), logs a progress line (step, loss,
the other metrics, steps/s, ETA), appends the metrics to the writer, saves an
orbax checkpoint every `checkpoint_every` steps and at the end, and raises
`Interrupted` at `stop_at_step` (a simulated kill). It resumes from the newest
readable checkpoint, and because steps draw their randomness from the step
index (never from a carried key), a resumed run computes what an
uninterrupted one would.

Training seconds up to each checkpoint are kept beside the checkpoints
(`<checkpoint dir>_seconds.json`), so a resumed run reports the time of the
whole run.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, Callable, NamedTuple, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from neuroprog.run import checkpoint
from neuroprog.run.logs import logger
from neuroprog.run.metrics import MetricWriter


class Interrupted(RuntimeError):
  """Raised at `stop_at_step`: simulates a kill (preemption drills, tests)."""


def scan_chunks(step_fn: Callable[[Any, jax.Array], tuple[Any, dict]]):
  """chunk(state, start, n) -> (state, metrics with a leading [n] axis).

  step_fn(state, step int32[]) -> (state, {name: array}) is scanned over steps
  start .. start + n - 1; one jitted program per distinct n.
  """
  compiled = {}

  def chunk(state, start, n):
    if n not in compiled:
      compiled[n] = jax.jit(lambda s, a: jax.lax.scan(step_fn, s, a + jnp.arange(n)))
    return compiled[n](state, start)
  return chunk


class LoopResult(NamedTuple):
  """state: the final state; step: its step; train_seconds: training time of
  the whole run (all processes); resumed_from: the checkpoint step the call
  started from, or None."""
  state: Any
  step: int
  train_seconds: float
  resumed_from: Optional[int]


def _seconds_path(manager) -> Optional[str]:
  return None if manager is None else f"{os.fspath(manager.directory)}_seconds.json"


def train_loop(name: str, state, chunk, *, total: int, log_every: int,
               checkpoint_every: int, manager=None,
               writer: Optional[MetricWriter] = None,
               stop_at_step: Optional[int] = None,
               seed_labels: Optional[Sequence[Any]] = None) -> LoopResult:
  """Runs `chunk` up to step `total`, resuming from `manager`'s checkpoints.

  Args:
    name: the stream's name in logs, metrics and errors.
    state: the initial state (a pytree of arrays); also the template that
      checkpoints are restored into.
    chunk: chunk(state, start, n) -> (state, metrics) (see `scan_chunks`).
      metrics["loss"] is required: float32[n] or float32[n, S] (S seeds).
    total, log_every, checkpoint_every: steps.
    manager: an orbax CheckpointManager (`checkpoint.manager`), or None to
      train in memory without checkpoints.
    writer: where metrics go (None: only the log).
    stop_at_step: raise `Interrupted` once this step is reached (after any
      checkpoint due at it).
    seed_labels: names of the S seeds, for the non-finite-loss message.

  Returns:
    LoopResult.
  """
  step, resumed_from = 0, None
  if manager is not None:
    restored_step, restored = checkpoint.restore_latest(
        manager, checkpoint.abstract_like(state))
    if restored is not None:
      state, step, resumed_from = restored, restored_step, restored_step
      logger.info("%s: resumed from step %d (%s)", name, step, manager.directory)
  seconds_path = _seconds_path(manager)
  seconds = {}
  if seconds_path and os.path.exists(seconds_path):
    with open(seconds_path) as f:
      seconds = json.load(f)
  train_seconds = float(seconds.get(str(step), 0.0))
  while step < total:
    n = min(log_every, total - step, checkpoint_every - step % checkpoint_every)
    t0 = time.time()
    new_state, metrics = chunk(state, step, n)
    loss = np.asarray(metrics["loss"])
    if not np.all(np.isfinite(loss)):
      where = np.argwhere(~np.isfinite(loss))[0]
      at = f"step {step + int(where[0]) + 1}"
      if loss.ndim == 2:
        seed = seed_labels[int(where[1])] if seed_labels is not None else int(where[1])
        at = f"seed {seed}, {at}"
      kept = (f"; the last good checkpoint is kept in {manager.directory}"
              if manager is not None else "")
      raise FloatingPointError(f"{name}: non-finite loss {loss[tuple(where)]} at {at}{kept}.")
    state, step = new_state, step + n
    dt = time.time() - t0
    train_seconds += dt
    rate = n / dt
    last = {k: np.asarray(v)[-1] for k, v in metrics.items()}
    # Loss first, then the rest by name (jit returns dicts sorted by key).
    scalars = {k: float(np.mean(last[k])) for k in ["loss"] + sorted(set(last) - {"loss"})}
    logger.info("%s step %d/%d %s | %.1f steps/s | ETA %s", name, step, total,
                " ".join(f"{k} {v:.4f}" for k, v in scalars.items()), rate,
                time.strftime("%H:%M:%S", time.gmtime((total - step) / rate)))
    if writer is not None:
      per_seed = {"loss": last["loss"].tolist()} if loss.ndim == 2 else None
      writer.write(name, step, {**scalars, "steps_per_s": rate}, per_seed=per_seed)
    if manager is not None and (step % checkpoint_every == 0 or step == total):
      checkpoint.save(manager, step, state)
      seconds[str(step)] = train_seconds
      with open(seconds_path, "w") as f:
        json.dump(seconds, f)
    if stop_at_step is not None and step >= stop_at_step:
      raise Interrupted(f"{name}: stopped at step {step} (stop_at_step).")
  return LoopResult(state, step, train_seconds, resumed_from)
