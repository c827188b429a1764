"""Held-out reconstruction per scale of a trained PNAG workdir, one JSON line.

For each scale t, the share of the workdir's held-out architectures whose
accumulated map after t, plainly decoded at its nodes, is exactly their
n_t-node sub-architecture (`neuroprog.pnag.train.heldout_scale_reconstruction`;
runs write the same list to results.json as `heldout_scale_reconstruction`).

  python benchmarks/pnag_heldout_scales.py WORKDIR [WORKDIR ...]
"""

import json
import os
import sys

import ml_collections

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from neuroprog.pnag import model as model_lib  # pylint: disable=wrong-import-position
from neuroprog.pnag import train  # pylint: disable=wrong-import-position


def main(workdirs):
  if not workdirs:
    raise SystemExit(__doc__)
  for wd in workdirs:
    model = train.load(wd)
    with open(os.path.join(wd, "config.json")) as f:
      config = ml_collections.ConfigDict(json.load(f))
    _, held = train.split(config, model.space)
    ops, adj = model.space.encode_batch(held)
    rec = train.heldout_scale_reconstruction(model_lib.autoencoder_for(model.ae_cfg),
                                             model.space, model.ae_params, model.codebook,
                                             ops, adj)
    print(json.dumps({"workdir": wd, "space": model.space.name,
                      "scales": list(model.ae_cfg.scales), "num_heldout": len(held),
                      "heldout_scale_reconstruction": rec}))


if __name__ == "__main__":
  main(sys.argv[1:])
