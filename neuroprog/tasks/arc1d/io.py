"""The official 1D-ARC file format: load, save, map family folders to intents.

One task per JSON file::

    {"train": [{"input": [[0, 2, 2, 0]], "output": [[0, 0, 2, 2]]}, ...],
     "test":  [{"input": [[...]], "output": [[...]]}],
     "uuid": "..."}

Grids are single rows (a list holding one list) of colours 0..9; input and
output of a pair have the same length.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import re
from typing import Optional, Sequence, Union

import jax
import numpy as np

from neuroprog.tasks.arc1d import families

Pair = tuple[np.ndarray, np.ndarray]

# Official folder names whose rule is one of our families.
OFFICIAL_TO_INTENT = {
    "1d_move_1p": ("move_right", 1),
    "1d_move_2p": ("move_right", 2),
    "1d_move_3p": ("move_right", 3),
    "1d_flip": ("flip", None),
    "1d_fill": ("fill", None),
    "1d_hollow": ("hollow", None),
    "1d_mirror": ("mirror", None),
    "1d_denoising_1c": ("denoise", None),
}
# Official families whose rule none of ours covers (for the error message).
OFFICIAL_UNMAPPED = (
    "1d_move_dynamic", "1d_move_2p_dp", "1d_padded_fill", "1d_denoising_mc",
    "1d_pcopy_1c", "1d_pcopy_mc", "1d_recolor_oe", "1d_recolor_cnt",
    "1d_recolor_cmp", "1d_scale_dp")


@dataclasses.dataclass(frozen=True)
class ArcTask:
  """One 1D-ARC task: demonstration pairs and test pairs of 1-D int64 grids."""
  name: str
  train: tuple[Pair, ...]
  test: tuple[Pair, ...]
  uuid: Optional[str] = None

  def pairs(self) -> tuple[Pair, ...]:
    return self.train + self.test

  def to_json(self) -> dict:
    def enc(pairs):
      return [{"input": [x.tolist()], "output": [y.tolist()]} for x, y in pairs]
    out = {"train": enc(self.train), "test": enc(self.test)}
    if self.uuid is not None:
      out["uuid"] = self.uuid
    return out


def _row(value, where):
  if not isinstance(value, list) or len(value) != 1 or not isinstance(value[0], list):
    raise ValueError(
        f"{where}: a grid must be a list holding one row (a list of ints), "
        f"got {json.dumps(value)[:60]}.")
  return families.check_grid(value[0], where)


def _pairs(obj, field, where):
  if field not in obj:
    raise ValueError(f"{where}: missing field {field!r} (need 'train' and 'test').")
  items = obj[field]
  if not isinstance(items, list) or not items:
    raise ValueError(f"{where}: field {field!r} must be a non-empty list of pairs.")
  pairs = []
  for i, item in enumerate(items):
    at = f"{where}: {field}[{i}]"
    if not isinstance(item, dict) or "input" not in item or "output" not in item:
      raise ValueError(f"{at}: a pair needs 'input' and 'output'.")
    x = _row(item["input"], f"{at}.input")
    y = _row(item["output"], f"{at}.output")
    if len(x) != len(y):
      raise ValueError(f"{at}: input has {len(x)} cells, output {len(y)}; "
                       "1D-ARC pairs have equal lengths.")
    pairs.append((x, y))
  return tuple(pairs)


def _natural_key(path: pathlib.Path):
  return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", path.name)]


def load_file(path) -> ArcTask:
  path = pathlib.Path(path)
  try:
    obj = json.loads(path.read_text())
  except json.JSONDecodeError as e:
    raise ValueError(f"{path}: not valid JSON ({e.msg}, line {e.lineno}).") from None
  except OSError as e:
    raise ValueError(f"{path}: cannot read ({e.strerror}).") from None
  if not isinstance(obj, dict):
    raise ValueError(f"{path}: expected a JSON object with 'train' and 'test'.")
  uuid = obj.get("uuid")
  return ArcTask(name=path.stem, train=_pairs(obj, "train", str(path)),
                 test=_pairs(obj, "test", str(path)),
                 uuid=str(uuid) if uuid is not None else None)


def load(path) -> Union[ArcTask, list[ArcTask]]:
  """Reads one task file (-> ArcTask) or a folder of them (-> list, in
  natural name order). Raises ValueError naming the file and field."""
  path = pathlib.Path(path)
  if path.is_dir():
    files = sorted(path.glob("*.json"), key=_natural_key)
    if not files:
      raise ValueError(f"{path}: folder holds no *.json task files.")
    return [load_file(f) for f in files]
  if not path.exists():
    raise ValueError(f"{path}: no such file or folder.")
  return load_file(path)


def save(tasks: Union[ArcTask, Sequence[ArcTask]], path) -> list[pathlib.Path]:
  """Writes tasks in the official format.

  One ArcTask and a path ending in .json: that file. Otherwise `path` is a
  folder (created) and each task goes to `<folder>/<task.name>.json`.
  Returns the written paths.
  """
  path = pathlib.Path(path)
  if isinstance(tasks, ArcTask):
    if path.suffix == ".json":
      path.parent.mkdir(parents=True, exist_ok=True)
      path.write_text(json.dumps(tasks.to_json()))
      return [path]
    tasks = [tasks]
  path.mkdir(parents=True, exist_ok=True)
  out = []
  for t in tasks:
    f = path / f"{t.name}.json"
    f.write_text(json.dumps(t.to_json()))
    out.append(f)
  return out


def intent_for(folder_name: str):
  """Maps an official family folder name (or path) to our intent.

  `1d_move_1p` -> ("move_right", 1), `1d_flip` -> ("flip", None), ... Raises
  ValueError for families whose rule is not one of ours.
  """
  name = os.path.basename(os.path.normpath(str(folder_name)))
  if name in OFFICIAL_TO_INTENT:
    return OFFICIAL_TO_INTENT[name]
  known = "" if name in OFFICIAL_UNMAPPED else " (not an official 1D-ARC family name)"
  raise ValueError(
      f"1D-ARC family {name!r}{known} has no matching neuroprog family; mapped "
      f"families: {sorted(OFFICIAL_TO_INTENT)}.")


def encode(grids: Sequence, max_len: int = families.MAX_LEN) -> np.ndarray:
  """Pads 1-D grids to int32[len(grids), max_len] with the pad token.

  Raises ValueError for a grid longer than max_len or with bad cells.
  """
  out = np.full((len(grids), max_len), families.PAD, np.int32)
  for i, g in enumerate(grids):
    g = families.check_grid(g, f"grid {i}")
    if len(g) > max_len:
      raise ValueError(f"grid {i} has {len(g)} cells; the model's maximum "
                       f"is max_len = {max_len}.")
    out[i, :len(g)] = g
  return out


def generate(key: jax.Array, intent, n_train: int = 3, n_test: int = 1,
             name: Optional[str] = None) -> ArcTask:
  """A task of our family `intent`, unpadded, ready for `save`."""
  fam, param = families.check_intent(intent)
  keys = jax.random.split(key, n_train + n_test)
  fid = families.FAMILIES.index(fam)
  x, y = jax.vmap(families.generate_one, (0, None, None))(keys, fid, param or 0)
  x, y = np.asarray(x), np.asarray(y)
  pairs = []
  for xi, yi in zip(x, y):
    n = int(np.sum(xi != families.PAD))
    pairs.append((xi[:n].astype(np.int64), yi[:n].astype(np.int64)))
  label = fam if param is None else f"{fam}_{param}"
  return ArcTask(name=name or f"np_{label}", train=tuple(pairs[:n_train]),
                 test=tuple(pairs[n_train:]))
