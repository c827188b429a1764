"""Tiny generate-to-cost config for the end-to-end test (a few minutes on 2
cores, mostly compiling the sampler).

  python -m experiments.generate_to_cost --config=experiments/configs/pnag_cost_test.py \
      --workdir=/tmp/cost_test
"""

from experiments.pipelines import generate_to_cost


def get_config():
  return generate_to_cost.default_config(
      space="mbv3",
      train_size=256,
      heldout_size=8,
      # OFA subnets as pnag_mbv3_cost; the image pyramid with parallel steps
      # (pnag_mbv3_cost.py:pyramid), whose sampler compiles in seconds: the
      # sequential sub-architecture sampler with a condition is tested in
      # test_pnag_generator.py.
      arch_distribution="ofa_subnets",
      schedule="pyramid",
      scales=(2, 5, 20),
      ae={"hidden": 16, "channels": 4, "codebook_size": 16, "rounds": 1,
          "scc_decode_weight": 0.0, "scale_tokens": "block"},
      gen={"width": 16, "depth": 1, "heads": 2, "mlp_ratio": 2},
      batch_size=32,
      ae_steps=20,
      gen_steps=20,
      request_quantiles=(0.1, 0.9),
      samples_per_request=32,
      pool_size=64,
      log_every=10,
      checkpoint_every=20,
  )
