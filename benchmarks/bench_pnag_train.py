"""Cost of one PNAG generator training step (stage 2), one JSON line per space.

For each space: the stage-2 step of `neuroprog.pnag.train.stage2_step` (the
function `train_and_evaluate` scans), on the experiment config's training set
tokenized by stage-1 parameters, run as the training loop runs it (a jitted
`lax.scan` over `--chunk` steps). Reported: seconds to tokenize the training
set (`token_data`), the first chunk's compile time, the steady milliseconds
per step, and, of that, the teacher inputs alone (all generation steps' node
context, `model.teacher_inputs`, reduced to a sum so that writing the
[B, L, C_in] array out is not what is timed), plus the fp32 matmul rate of the
same run. With `--workdir space=DIR` the tokens come from that workdir's
trained stage 1 (its config), otherwise from freshly initialised autoencoder
parameters of the committed config (the same shapes and cost).

  python benchmarks/bench_pnag_train.py --spaces mbv3,darts \
      [--workdir darts=workdirs/pnag_darts] [--chunk 50]
"""

import argparse
import importlib
import os
import sys
import time

import jax
import jax.numpy as jnp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # pylint: disable=g-import-not-at-top,wrong-import-position

from neuroprog.pnag import model as model_lib  # pylint: disable=wrong-import-position
from neuroprog.pnag import train  # pylint: disable=wrong-import-position
from neuroprog.run import loop as run_loop  # pylint: disable=wrong-import-position


def config_and_stage1(name, workdir):
  """(config, ae_cfg, gen_cfg, ae_params, codebook) of a workdir or of the
  committed config with fresh autoencoder parameters."""
  if workdir:
    model = train.load(workdir)
    return (train.load_config(workdir), model.ae_cfg, model.gen_cfg, model.ae_params,
            model.codebook)
  config = importlib.import_module(f"experiments.configs.pnag_{name}").get_config()
  _, ae_cfg, gen_cfg = train.build(config)
  ae = model_lib.autoencoder_for(ae_cfg)
  st = ae.init(jax.random.key(0))
  return config, ae_cfg, gen_cfg, st.params, ae.codebook_of(st)


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--spaces", default="mbv3,darts")
  ap.add_argument("--chunk", type=int, default=50, help="steps per timed scan")
  ap.add_argument("--workdir", action="append", default=[],
                  help="space=DIR: tokens from the trained stage 1 of DIR")
  args = ap.parse_args()
  if args.chunk < 1:
    raise ValueError(f"--chunk={args.chunk}; allowed: a positive number of steps.")
  workdirs = dict(w.split("=", 1) for w in args.workdir)
  gflops = common.matmul_gflops()
  for name in args.spaces.split(","):
    config, ae_cfg, gen_cfg, ae_params, codebook = config_and_stage1(name, workdirs.get(name))
    space = train.build(config)[0]
    archs, _ = train.split(config, space)
    ops_T, adj_T = space.encode_batch(archs)
    t0 = time.perf_counter()
    toks = jax.block_until_ready(train.token_data(ae_cfg, ae_params, codebook, ops_T, adj_T))
    token_s = time.perf_counter() - t0
    state, one = train.stage2_step(config, ae_cfg, gen_cfg, codebook, toks)
    chunk = run_loop.scan_chunks(one)
    t0 = time.perf_counter()
    state, _ = common.block(chunk(state, 0, args.chunk))
    first = time.perf_counter() - t0
    sec = common.time_call(lambda s: chunk(s, args.chunk, args.chunk), state, min_time=3.0)
    batch = toks[:config.batch_size]
    inputs = jax.jit(lambda t: jnp.sum(model_lib.teacher_inputs(
        model_lib.split_tokens(t, ae_cfg.token_shapes), codebook, gen_cfg.scales,
        ae_cfg.num_nodes, ae_cfg.node_sets, ae_cfg.new_entries, gen_cfg.later_twins,
        gen_cfg.between_types)))
    inputs_sec = common.time_call(inputs, batch, min_time=2.0)
    common.emit({
        "bench": "pnag_stage2_step", "space": name, "trained_stage1": name in workdirs,
        "batch": config.batch_size, "tokens": gen_cfg.seq_len,
        "generation_steps": len(gen_cfg.counts), "chunk": args.chunk,
        "step_ms": round(1000 * sec / args.chunk, 2),
        "teacher_inputs_ms": round(1000 * inputs_sec, 2),
        "compile_s": round(first - sec, 1),
        "token_data_s": round(token_s, 1), "training_archs": len(archs),
        "generator": {k: getattr(gen_cfg, k) for k in
                      ("width", "depth", "heads", "attention", "step_order", "step_sum",
                       "later_twins", "between_types")},
        "matmul_fp32_gflops": round(gflops, 1),
        **common.machine()})


if __name__ == "__main__":
  main()
