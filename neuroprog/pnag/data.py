"""NAS-Bench-201 accuracy tables: `load_nb201(path) -> NB201Table`.

Two sources, one in-memory table:

* a CSV table with columns `index, arch_str` and, for each dataset in
  DATASETS and split in SPLITS, `<dataset>-<split>` (accuracy in percent), as
  in `../shared/data/nas-bench-201/nb201_hp12_accuracy.csv`;
* the official NAS-Bench-201 (`nas_201_api`) or NATS-Bench (`nats_bench`,
  topology space) benchmark file, read through its own API when that package
  is installed (an optional extra, imported only here, only then). The
  conversion from the API's queries is `from_api(api)`, which works on any
  object with the official `arch(i)`, `len()` and `get_more_info(i, dataset,
  hp=..., is_random=False)`.

The table is indexed by the official architecture index; `archs` holds the
canonical cell strings in that order.
"""

from __future__ import annotations

import csv
import os
from typing import Mapping, Optional, Sequence

import numpy as np

from neuroprog.pnag import spaces
from neuroprog.pnag.spaces import nb201 as nb201_space

DATASETS = ("cifar10", "cifar100", "imagenet16-120")
SPLITS = ("val", "test")


class NB201Table:
  """All evaluated NAS-Bench-201 cells of one benchmark file.

  Attributes:
    archs: tuple[str] of M canonical cell strings in index order.
    arch_tuples: list of M 6-tuples of op names (the space's architectures).
    encodings: (ops int32[M, 8] op index per node, adj float32[M, 8, 8]),
      as `space.encode_batch` gives them.
    source: where it was read from.
  """

  def __init__(self, archs: Sequence, accuracies: Mapping[tuple[str, str], np.ndarray],
               source: str = "<memory>"):
    """archs: cell strings or op 6-tuples, in index order; accuracies:
    {(dataset, split): float[M] percent}."""
    space = spaces.get("nb201")
    self.space = space
    self.source = source
    self.arch_tuples = [_as_arch(space, a) for a in archs]
    self.archs = tuple(_cell_string(a) for a in self.arch_tuples)
    self._index = {}
    for i, a in enumerate(self.archs):
      if a in self._index:
        raise ValueError(f"{source}: architecture {a!r} appears twice (indices "
                         f"{self._index[a]} and {i}).")
      self._index[a] = i
    self._acc = {}
    for (d, s), v in accuracies.items():
      v = np.asarray(v, np.float32)
      if v.shape != (len(self.archs),):
        raise ValueError(f"{source}: accuracy {d}-{s} has shape {v.shape}; "
                         f"expected ({len(self.archs)},).")
      self._acc[(d, s)] = v
    self.encodings = _encode_fast(self.arch_tuples)

  def __len__(self) -> int:
    return len(self.archs)

  @property
  def datasets(self) -> tuple[str, ...]:
    return tuple(d for d in DATASETS if any(k[0] == d for k in self._acc))

  def accuracy(self, dataset: str, split: str) -> np.ndarray:
    """float32[M] accuracy in percent, in index order."""
    if dataset not in DATASETS:
      raise ValueError(f"dataset {dataset!r}; allowed: {list(DATASETS)}.")
    if split not in SPLITS:
      raise ValueError(f"split {split!r}; allowed: {list(SPLITS)}.")
    if (dataset, split) not in self._acc:
      raise ValueError(f"{self.source} has no {dataset}-{split} accuracies; it "
                       f"has {sorted(f'{d}-{s}' for d, s in self._acc)}.")
    return self._acc[(dataset, split)]

  def index_of(self, arch) -> int:
    """Index of an architecture (cell string or op tuple); ValueError if absent."""
    key = self.space.canonical(self.space.from_string(arch) if isinstance(arch, str)
                               else arch)
    if key not in self._index:
      raise ValueError(f"{key!r} is not in {self.source}.")
    return self._index[key]

  def indices_of(self, archs) -> np.ndarray:
    return np.array([self.index_of(a) for a in archs], np.int64)

  def percentile(self, dataset: str, split: str, values) -> np.ndarray:
    """Share (0..1) of the table's architectures whose accuracy is strictly
    below each value: 0.99 means the top 1%."""
    acc = np.sort(self.accuracy(dataset, split))
    return np.searchsorted(acc, np.asarray(values), side="left") / len(acc)

  def __repr__(self):
    return f"NB201Table({len(self)} cells, {sorted(self._acc)}, from {self.source})"


_OP_SET = frozenset(nb201_space.OPERATIONS)
_OP_ID = {o: nb201_space.OP_NAMES.index(o) for o in nb201_space.OPERATIONS}
_SOURCES = ("0", "0", "1", "0", "1", "2")


def _as_arch(space, a) -> tuple:
  """An op 6-tuple from a cell string or tuple (ValueError if malformed)."""
  if isinstance(a, str):
    return _fast_parse(a) or space.from_string(a)
  if isinstance(a, tuple) and len(a) == 6 and all(o in _OP_SET for o in a):
    return a
  space.canonical(a)   # raises the space's ValueError naming what is wrong
  return tuple(a)


def _cell_string(o) -> str:
  return f"|{o[0]}~0|+|{o[1]}~0|{o[2]}~1|+|{o[3]}~0|{o[4]}~1|{o[5]}~2|"


def _fast_parse(s: str):
  """The op tuple of a well-formed cell string, else None (then the space's
  own parser runs and names the bad token). A fast path, so that loading the
  15,625-row table stays interactive."""
  t = s.split("|")
  if len(t) != 10 or t[0] or t[9] or t[2] != "+" or t[5] != "+":
    return None
  ops = []
  for tok, src in zip((t[1], t[3], t[4], t[6], t[7], t[8]), _SOURCES):
    op, sep, i = tok.partition("~")
    if not sep or i != src or op not in _OP_SET:
      return None
    ops.append(op)
  return tuple(ops)


def _encode_fast(arch_tuples):
  """`space.encode_batch` without the per-architecture checks (the tuples are
  already validated): (int32[M, 8], float32[M, 8, 8])."""
  m = len(arch_tuples)
  ops = np.empty((m, nb201_space.NUM_NODES), np.int32)
  ops[:, 0] = nb201_space.OP_NAMES.index("input")
  ops[:, -1] = nb201_space.OP_NAMES.index("output")
  ops[:, 1:-1] = np.array([[_OP_ID[o] for o in a] for a in arch_tuples],
                          np.int32).reshape(m, 6)
  adj = np.broadcast_to(nb201_space.ADJACENCY, (m,) + nb201_space.ADJACENCY.shape)
  return ops, np.ascontiguousarray(adj, np.float32)


def _read_csv(path: str) -> NB201Table:
  required = ["index", "arch_str"] + [f"{d}-{s}" for d in DATASETS for s in SPLITS]
  with open(path, newline="") as f:
    reader = csv.reader(f)
    try:
      header = next(reader)
    except StopIteration:
      raise ValueError(f"{path}: empty file; expected a header "
                       f"{required}.") from None
    missing = [c for c in ("index", "arch_str") if c not in header]
    if missing:
      raise ValueError(f"{path}: missing columns {missing}; the header is {header}, "
                       f"expected {required}.")
    acc_cols = [c for c in header if c not in ("index", "arch_str")]
    pairs = {}
    for c in acc_cols:
      d, _, s = c.rpartition("-")
      if d not in DATASETS or s not in SPLITS:
        raise ValueError(f"{path}: unknown column {c!r}; accuracy columns are "
                         f"<dataset>-<split> with dataset in {list(DATASETS)} and "
                         f"split in {list(SPLITS)}.")
      pairs[c] = (d, s)
    col = {c: header.index(c) for c in header}
    rows = list(reader)
  space = spaces.get("nb201")
  n = len(rows)
  index = np.empty(n, np.int64)
  archs = []
  values = np.empty((n, len(acc_cols)), np.float32)
  for r, row in enumerate(rows):
    line = r + 2
    if len(row) != len(header):
      raise ValueError(f"{path}, row {line}: {len(row)} fields, the header has "
                       f"{len(header)}.")
    try:
      index[r] = int(row[col["index"]])
    except ValueError:
      raise ValueError(f"{path}, row {line}, field 'index': {row[col['index']]!r} "
                       "is not an integer.") from None
    try:
      arch = _fast_parse(row[col["arch_str"]])
      archs.append(arch if arch is not None else space.from_string(row[col["arch_str"]]))
    except ValueError as e:
      raise ValueError(f"{path}, row {line}, field 'arch_str': {e}") from None
    for j, c in enumerate(acc_cols):
      try:
        values[r, j] = float(row[col[c]])
      except ValueError:
        raise ValueError(f"{path}, row {line}, field {c!r}: {row[col[c]]!r} is "
                         "not a number.") from None
  order = np.argsort(index, kind="stable")
  dup = np.nonzero(np.diff(index[order]) == 0)[0]
  if dup.size:
    i = int(index[order][dup[0]])
    raise ValueError(f"{path}: index {i} appears twice (rows "
                     f"{[int(k) + 2 for k in np.nonzero(index == i)[0]]}).")
  archs = [archs[i] for i in order]
  return NB201Table(archs, {pairs[c]: values[order, j] for j, c in enumerate(acc_cols)},
                    source=path)


# The official API's dataset names: validation accuracy of CIFAR-10 lives
# under 'cifar10-valid' (train on train, evaluate on the held-out half of the
# training set); test accuracy under 'cifar10'. CIFAR-100 and ImageNet16-120
# carry both 'valid-accuracy' and 'test-accuracy' (their test set split in two).
_API_QUERIES = {("cifar10", "val"): ("cifar10-valid", "valid-accuracy"),
                ("cifar10", "test"): ("cifar10", "test-accuracy"),
                ("cifar100", "val"): ("cifar100", "valid-accuracy"),
                ("cifar100", "test"): ("cifar100", "test-accuracy"),
                ("imagenet16-120", "val"): ("ImageNet16-120", "valid-accuracy"),
                ("imagenet16-120", "test"): ("ImageNet16-120", "test-accuracy")}


def from_api(api, hp: str = "200", source: str = "api") -> NB201Table:
  """The table from an official NAS-Bench-201 / NATS-Bench (tss) API object.

  Uses `len(api)`, `api.arch(i)` (the cell string of index i) and
  `api.get_more_info(i, dataset, hp=hp, is_random=False)` (a dict with
  'valid-accuracy' / 'test-accuracy' in percent), as documented by both packages.
  """
  n = len(api)
  archs = [api.arch(i) for i in range(n)]
  acc = {k: np.empty(n, np.float32) for k in _API_QUERIES}
  for i in range(n):
    cache = {}
    for k, (name, field) in _API_QUERIES.items():
      if name not in cache:
        cache[name] = api.get_more_info(i, name, hp=hp, is_random=False)
      info = cache[name]
      if field not in info:
        raise ValueError(f"{source}: get_more_info({i}, {name!r}) has no "
                         f"{field!r}; it returned keys {sorted(info)}.")
      acc[k][i] = float(info[field])
  return NB201Table(archs, acc, source=source)


def _official_api(path: str):
  """An API object for an official benchmark file, from whichever package is
  installed (NATS-Bench first, then NAS-Bench-201)."""
  try:
    import nats_bench  # pylint: disable=g-import-not-at-top
    return nats_bench.create(path, "tss", fast_mode=True, verbose=False)
  except ImportError:
    pass
  try:
    from nas_201_api import NASBench201API  # pylint: disable=g-import-not-at-top
    return NASBench201API(path, verbose=False)
  except ImportError:
    raise ValueError(
        f"{path} is not a .csv table, and reading an official NAS-Bench-201 / "
        "NATS-Bench file needs `pip install nats_bench` (or `nas-bench-201`), "
        "which is not installed.") from None


def load_nb201(path: str, *, hp: str = "200", api=None) -> NB201Table:
  """Loads a NAS-Bench-201 accuracy table.

  Args:
    path: a `.csv` table (module doc) or an official benchmark file or
      directory (`.pth`, NATS-Bench `NATS-tss-*`).
    hp: training schedule for the official files ("12" or "200"); the CSV
      carries its own.
    api: an already-built official API object (skips `path` loading).

  Raises:
    ValueError naming the file, row and field: missing file, wrong columns,
    unparsable strings or numbers, duplicate indices or architectures.
  """
  if api is not None:
    return from_api(api, hp=hp, source=str(path))
  if not os.path.exists(path):
    raise ValueError(f"NAS-Bench-201 table {path!r} does not exist.")
  if str(path).endswith(".csv"):
    return _read_csv(str(path))
  return from_api(_official_api(str(path)), hp=hp, source=str(path))


def default_csv() -> Optional[str]:
  """The shared 12-epoch CSV beside the project root, if present (tests,
  benchmarks); never required by the library."""
  env = os.environ.get("NEUROPROG_SHARED_DATA")
  root = env or os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
      os.path.dirname(os.path.abspath(__file__))))), "shared", "data")
  path = os.path.join(root, "nas-bench-201", "nb201_hp12_accuracy.csv")
  return path if os.path.exists(path) else None
