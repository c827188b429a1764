"""Tiny conditional-search config for the end-to-end test (about a minute).

  python -m experiments.search --config=experiments/configs/pnag_cond_test.py --workdir=/tmp/cond_test
"""

from experiments.pipelines import search


def get_config():
  return search.default_config(
      targets=("imagenet16-120",),
      schedule="pyramid",        # as pnag_nb201_cond
      scales=(2, 4, 8),
      ae={"hidden": 16, "channels": 4, "codebook_size": 16, "rounds": 1,
          "scc_decode_weight": 0.0, "scale_tokens": "block"},
      gen={"width": 16, "depth": 1, "heads": 2, "mlp_ratio": 2},
      surrogate={"hidden": 16, "context_dim": 4, "support_size": 8, "query_size": 32,
                 "episodes": 2, "steps": 20},
      batch_size=32,
      ae_steps=20,
      gen_steps=20,
      gen_learning_rate=2e-3,
      contexts_per_task=4,
      num_candidates=32,
      levels=(0.1, 0.9),
      control_samples=32,
      eval_seeds=2,
      log_every=10,
      checkpoint_every=20,
  )
