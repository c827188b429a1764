"""The package layering of neuroprog, read from the code's own imports.

ALLOWED is the table of docs/ARCHITECTURE.md ("Packages and allowed imports"):
a package (or top-level module) of neuroprog may import only the packages
listed for it. Every import counts, including those inside functions.
"""
import ast
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = os.path.join(ROOT, "neuroprog")

ALLOWED = {
    "specs": set(),
    "run": set(),
    "programs": {"specs"},
    "graphs": {"specs", "programs"},
    "tasks": {"specs"},
    "meta": {"specs", "programs", "graphs"},
    "intents": {"specs", "meta"},
    "train": {"specs", "programs", "graphs", "tasks", "meta", "intents", "run"},
    "synthesis": {"specs", "programs", "tasks", "meta", "intents", "run", "train"},
    "analysis": {"specs", "programs", "tasks"},
    "pnag": {"run"},
    "__init__": {"specs", "programs", "graphs", "tasks", "synthesis"},
}


def _unit(path: str) -> str:
  """The package (or top-level module) of neuroprog a file belongs to."""
  rel = os.path.relpath(path, LIB).split(os.sep)
  return rel[0][:-3] if len(rel) == 1 else rel[0]


def _imported_units(tree: ast.AST):
  """(line, unit) for every import of a neuroprog unit, and every import of
  the repository's non-library trees (experiments, benchmarks, tests)."""
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      names = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom) and node.module:
      if node.level:
        raise AssertionError(f"relative import at line {node.lineno}; use absolute ones")
      names = ([f"neuroprog.{a.name}" for a in node.names] if node.module == "neuroprog"
               else [node.module])
    else:
      continue
    for name in names:
      parts = name.split(".")
      if parts[0] == "neuroprog" and len(parts) > 1:
        yield node.lineno, parts[1]
      elif parts[0] in ("experiments", "benchmarks", "tests"):
        yield node.lineno, parts[0]


def _actual_imports():
  """{unit: [(file, line, imported unit)]}; the top level's lazy exports
  (`neuroprog._EXPORTS`) count as imports of their modules."""
  import neuroprog  # pylint: disable=g-import-not-at-top
  found = {"__init__": [("neuroprog/__init__.py", 0, m.split(".")[1])
                        for m in neuroprog._EXPORTS.values()]}  # pylint: disable=protected-access
  for root, _, files in os.walk(LIB):
    for f in files:
      if f.endswith(".py"):
        path = os.path.join(root, f)
        with open(path) as fh:
          tree = ast.parse(fh.read(), path)
        unit = _unit(path)
        for line, target in _imported_units(tree):
          if target != unit:
            found.setdefault(unit, []).append((os.path.relpath(path, ROOT), line, target))
  return found


def test_every_unit_of_the_library_is_in_the_table():
  units = {_unit(os.path.join(root, f)) for root, _, files in os.walk(LIB)
           for f in files if f.endswith(".py")}
  assert units == set(ALLOWED), (
      f"add to ALLOWED (and docs/ARCHITECTURE.md): {sorted(units - set(ALLOWED))}; "
      f"gone: {sorted(set(ALLOWED) - units)}")


def test_imports_follow_the_table():
  bad = [f"{path}:{line} ({unit}) imports {target}"
         for unit, hits in _actual_imports().items()
         for path, line, target in hits if target not in ALLOWED[unit]]
  assert not bad, "imports outside the layering:\n" + "\n".join(bad)


def test_pnag_is_free_of_the_weight_synthesis_stack():
  hits = _actual_imports().get("pnag", [])
  assert {t for _, _, t in hits} <= {"run"}, hits


def test_the_table_detects_a_forbidden_import():
  tree = ast.parse("from neuroprog.train import loop\nimport experiments.search\n")
  assert sorted(t for _, t in _imported_units(tree)) == ["experiments", "train"]
  assert "train" not in ALLOWED["pnag"] and "experiments" not in ALLOWED["pnag"]


def test_architecture_doc_shows_the_same_table():
  with open(os.path.join(ROOT, "docs", "ARCHITECTURE.md")) as f:
    text = f.read()
  rows = {}
  for line in text.splitlines():
    m = re.match(r"^\| `(\w+)` \|[^|]*\| ([^|]*) \|$", line)
    if m:
      cell = m.group(2).strip()
      rows[m.group(1)] = set(re.findall(r"`(\w+)`", cell))
  assert rows == ALLOWED, {k: (rows.get(k), ALLOWED.get(k))
                           for k in set(rows) | set(ALLOWED) if rows.get(k) != ALLOWED.get(k)}


@pytest.mark.parametrize("module", ["neuroprog.pnag", "neuroprog.pnag.train",
                                    "neuroprog.pnag.search"])
def test_importing_pnag_loads_no_meta_learning_module(module):
  import subprocess  # pylint: disable=g-import-not-at-top
  import sys  # pylint: disable=g-import-not-at-top
  code = (f"import sys, {module}; "
          "bad = sorted(m for m in sys.modules if m.split('.')[:2] in "
          "(['neuroprog', 'train'], ['neuroprog', 'meta'], ['neuroprog', 'tasks'], "
          "['neuroprog', 'graphs'])); print(bad)")
  out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                       text=True, timeout=300)
  assert out.returncode == 0, out.stderr[-2000:]
  assert out.stdout.strip() == "[]", out.stdout
