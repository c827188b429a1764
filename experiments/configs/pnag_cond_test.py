"""Tiny conditional-search config for the end-to-end test (about a minute).

  python -m experiments.search --config=experiments/configs/pnag_cond_test.py --workdir=/tmp/cond_test
"""

from experiments.configs import pnag_nb201_cond


def get_config():
  c = pnag_nb201_cond.get_config()
  c.targets = ("imagenet16-120",)
  c.scales = (2, 4, 8)
  c.ae = {"hidden": 16, "channels": 4, "codebook_size": 16, "rounds": 1,
          "codebook": "ema", "scc_weight": 1.0, "scc_decode_weight": 0.0}
  c.gen = {"width": 16, "depth": 1, "heads": 2, "mlp_ratio": 2}
  c.surrogate = {"hidden": 16, "context_dim": 4, "support_size": 8, "query_size": 32,
                 "episodes": 2, "steps": 20}
  c.batch_size = 32
  c.ae_steps = 20
  c.gen_steps = 20
  c.contexts_per_task = 4
  c.num_candidates = 32
  c.levels = (0.1, 0.9)
  c.control_samples = 32
  c.eval_seeds = 2
  c.log_every = 10
  c.checkpoint_every = 20
  return c
