"""Throughput of the jitted PNAG sampler, one JSON line per search space.

For each space: architectures per second drawn by `neuroprog.pnag.model.sampler`
at batch 4,096 (token maps scale by scale, codebook lookups, upsampling,
decoding, by default plainly as `sample` does (`--decode valid`: the
constrained decoder);
compilation excluded; `compile_s`: the first call less one batch), the FLOPs per architecture from XLA's cost analysis,
and the machine's fp32 matmul GFLOP/s measured in the same run. Architectures
come from the space's experiment config; with `--workdir space=DIR` the
trained parameters of that workdir are used (and the share of valid graphs is
reported), otherwise freshly initialised ones (the same program and cost).

  python benchmarks/bench_pnag.py [--batch 4096] [--workdir nb201=workdirs/pnag_nb201]
  python benchmarks/bench_pnag.py --spaces nb201 --set gen.width=32 --set gen.depth=2

`--set ae.KEY=VALUE` / `--set gen.KEY=VALUE` change the config of the untrained
models (for sizing a generator against the sampler budget; values are parsed as
Python literals, else kept as strings).
"""

import argparse
import ast
import importlib
import os
import sys
import time

import jax
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # pylint: disable=g-import-not-at-top,wrong-import-position

from neuroprog.pnag import generator as gen_lib  # pylint: disable=wrong-import-position
from neuroprog.pnag import model as model_lib  # pylint: disable=wrong-import-position
from neuroprog.pnag import train  # pylint: disable=wrong-import-position


def untrained(space_name, overrides=()):
  config = importlib.import_module(f"experiments.configs.pnag_{space_name}").get_config()
  for item in overrides:
    key, value = item.split("=", 1)
    group, name = key.split(".", 1)
    if group not in ("ae", "gen"):
      raise ValueError(f"--set {item}: the key must start with 'ae.' or 'gen.'.")
    try:
      value = ast.literal_eval(value)
    except (ValueError, SyntaxError):
      pass
    sub = dict(config[group])
    sub[name] = value
    config[group] = sub
  space, ae_cfg, gen_cfg = train.build(config)
  ae, gen = model_lib.autoencoder_for(ae_cfg), model_lib.generator_for(gen_cfg)
  st = ae.init(jax.random.key(0))
  gp = gen_lib.init_params(gen_cfg, jax.random.key(1))
  return model_lib.PNAG(space, ae_cfg, gen_cfg, st.params, ae.codebook_of(st), gp)


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--batch", type=int, default=4096)
  ap.add_argument("--spaces", default="nb201,mbv3,darts")
  ap.add_argument("--decode", default="argmax", choices=model_lib.DECODES,
                  help="argmax: plain decoding (sample()'s default); "
                       "valid: the constrained decoder")
  ap.add_argument("--set", action="append", default=[], dest="overrides",
                  help="ae.KEY=VALUE or gen.KEY=VALUE for the untrained models")
  ap.add_argument("--workdir", action="append", default=[],
                  help="space=DIR: use the trained model of DIR for that space")
  args = ap.parse_args()
  workdirs = dict(w.split("=", 1) for w in args.workdir)
  gflops = common.matmul_gflops()
  for name in args.spaces.split(","):
    model = (train.load(workdirs[name]) if name in workdirs
             else untrained(name, args.overrides))
    fn = model_lib.sampler(model.ae_cfg, model.gen_cfg, args.batch,
                           space_name=name if args.decode == "valid" else None)
    call = lambda k: fn(model.ae_params, model.codebook, model.gen_params, k, None)
    t0 = time.perf_counter()   # the first call: compilation plus one batch
    jax.block_until_ready(call(jax.random.key(1)))
    first = time.perf_counter() - t0
    sec = common.time_call(call, jax.random.key(0), min_time=3.0)
    flops = common.flops_of(fn, model.ae_params, model.codebook, model.gen_params,
                            jax.random.key(0), None)
    record = {"bench": "pnag_sampler", "space": name, "batch": args.batch,
              "decode": args.decode,
              "trained": name in workdirs,
              "archs_per_s": round(args.batch / sec, 1),
              "compile_s": round(first - sec, 1),
              "seconds_per_arch": sec / args.batch,
              "flops_per_arch": None if flops is None else round(flops / args.batch),
              "achieved_gflops": None if flops is None else round(flops / sec / 1e9, 2),
              "matmul_fp32_gflops": round(gflops, 1),
              "generator_params": int(sum(np.size(x) for x in
                                          jax.tree_util.tree_leaves(model.gen_params))),
              "scales": list(model.gen_cfg.scales),
              "tokens": model.gen_cfg.seq_len,
              "scale_tokens": model.ae_cfg.scale_tokens,
              "generator": {k: getattr(model.gen_cfg, k) for k in
                            ("width", "depth", "heads", "mlp_ratio", "attention",
                             "step_order", "token_inputs", "step_sum", "later_twins",
                             "between_types")},
              "codebook_size": model.ae_cfg.codebook_size,
              "overrides": [] if name in workdirs else args.overrides,
              **common.machine()}
    if name in workdirs:
      ops, adj = call(jax.random.key(1))
      ops, adj = np.asarray(ops), np.asarray(adj)
      record["valid_share"] = float(np.mean([model.space.is_valid(o, a)
                                             for o, a in zip(ops, adj)]))
    common.emit(record)


if __name__ == "__main__":
  main()
