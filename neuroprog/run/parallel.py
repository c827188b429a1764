"""Seeds as a leading axis, sharded across devices with a Mesh.

Every seed trains independently, so the seed axis is pure data parallelism:
the train state of S seeds is one pytree with leading dimension S, one
compiled step trains all of them (`jax.vmap`), and with several devices the
axis is split over a 1-D `Mesh` named "seeds" (`jax.jit` with
`NamedSharding`). No collective communication is needed. The same code runs
on 1 CPU, on forced host devices, on GPUs and TPUs; on several hosts call
`jax.distributed.initialize()` first and the mesh spans all processes'
devices.
"""

from __future__ import annotations

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

AXIS = "seeds"


def seed_mesh(n_seeds: int, devices=None) -> Mesh:
  """A 1-D mesh over the largest number of devices that divides n_seeds."""
  devices = list(jax.devices() if devices is None else devices)
  k = max(d for d in range(1, len(devices) + 1) if n_seeds % d == 0)
  return Mesh(np.array(devices[:k]), (AXIS,))


def seed_sharding(mesh: Mesh) -> NamedSharding:
  """Leading (seed) axis split over the mesh, the rest replicated."""
  return NamedSharding(mesh, PartitionSpec(AXIS))


def replicated(mesh: Mesh) -> NamedSharding:
  return NamedSharding(mesh, PartitionSpec())


def shard_seeds(tree, mesh: Mesh):
  """Places a pytree whose leaves have a leading seed axis on the mesh."""
  return jax.device_put(tree, seed_sharding(mesh))
