"""Training metrics as JSON lines (workdir/metrics.jsonl) and TensorBoard events."""

from __future__ import annotations

import json
import os


class MetricWriter:
  """Appends metrics to workdir/metrics.jsonl and TensorBoard event files
  (workdir/tensorboard/<name>/, via tensorboardX); a context manager.

  Each JSON line is {"model": name, "step": int, **scalars} plus
  "<key>_per_seed" lists for per-seed values. `model` names the stream (a
  meta-learner, a PNAG stage, a surrogate).
  """

  def __init__(self, workdir: str):
    self.workdir = workdir
    self._jsonl = open(os.path.join(workdir, "metrics.jsonl"), "a")
    self._tb = {}

  def _board(self, model):
    if model not in self._tb:
      from tensorboardX import SummaryWriter  # pylint: disable=g-import-not-at-top
      self._tb[model] = SummaryWriter(os.path.join(self.workdir, "tensorboard", model))
    return self._tb[model]

  def write(self, model: str, step: int, scalars: dict[str, float], per_seed=None):
    record = {"model": model, "step": int(step), **scalars}
    if per_seed:
      record.update({f"{k}_per_seed": v for k, v in per_seed.items()})
    self._jsonl.write(json.dumps(record) + "\n")
    self._jsonl.flush()
    board = self._board(model)
    for k, v in scalars.items():
      board.add_scalar(k, v, step)

  def close(self):
    self._jsonl.close()
    for b in self._tb.values():
      b.close()

  def __enter__(self):
    return self

  def __exit__(self, *exc):
    self.close()
