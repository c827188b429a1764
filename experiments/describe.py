"""Prints each default target architecture: T, neural-graph size and groups.

  python -m experiments.describe [--grouping=orbit|role]
"""

from absl import app
from absl import flags

import neuroprog
from neuroprog import tasks

_GROUPING = flags.DEFINE_enum("grouping", None, ["orbit", "role"],
                              "Only this grouping (default: both).")


def describe(task: str, groupings=("orbit", "role")) -> str:
  spec = neuroprog.default_spec(task)
  lines = [f"{task}: {spec}", f"  parameters T = {neuroprog.num_params(spec):,}"]
  for grouping in groupings:
    ng = neuroprog.neural_graph(spec, grouping)
    lines.append(
        f"  grouping={grouping:5s}: {ng.num_nodes:,} nodes, {ng.num_edges:,} "
        f"edges, {ng.num_node_groups} node groups, {ng.num_edge_groups} edge "
        f"groups, {len(ng.roles)} roles")
  return "\n".join(lines)


def main(argv):
  del argv
  groupings = (_GROUPING.value,) if _GROUPING.value else ("orbit", "role")
  for task in tasks.NAMES:
    print(describe(task, groupings))


if __name__ == "__main__":
  app.run(main)
