"""Training-step speed of each meta-learner on each task.

One JSON line per (model, task): forward+backward(+Adam) steps per second for
a batch of 8 intents x 128 examples at d_meta = 64 (hidden width 64 for
Meta-MLP / direct, d = 64 for Meta-GNN) and k = 3 rounds, the FLOPs of one
step from XLA's cost analysis, the achieved GFLOP/s, and the machine's fp32
matmul GFLOP/s measured in the same run. Compilation is excluded.

The matmul rate of this shared 2-core VM moves by up to 1.5x between
back-to-back measurements, so it is measured right before and right after
each model's timing and the fraction uses the higher of the two (the
conservative choice: a slow reference would flatter the model).

  python benchmarks/bench_meta.py [--tasks sumfirst,addmod] [--models meta_gnn]
      [--layers 1,2,4]

--widths=config times each model as the task's experiment config trains it
(`experiments/configs/<task>.py`: its widths, intents per step, examples per
intent, learning rates), through the training loop's own compiled chunk: per
model, the compile seconds, steps per second with 1 seed and with --config_seeds
seeds in one program, FLOPs per step (XLA's cost analysis of the lowered
chunk) and the matmul rate of the same run.

  python benchmarks/bench_meta.py --tasks arc1d --widths=config [--config_seeds 5,10]
      [--config arc1d_paper] [--set "examples_per_intent=16;intents_per_step=4"]

--layers times the same models on deeper targets of each task (SUMFIRST: the
MLP with that many hidden layers of 16; ADDMOD: the Transformer with that many
blocks; 1D-ARC: that many encoder and decoder layers) and adds the neural
graph's size |V| + |E| and the step time per thousand graph elements, the
figure that is flat when a model's cost grows linearly in the graph.
"""

import argparse
import dataclasses
import importlib
import os
import time
import sys

import jax
import optax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # pylint: disable=g-import-not-at-top,wrong-import-position

from neuroprog import graphs, meta, programs, specs, tasks, train  # pylint: disable=g-import-not-at-top,wrong-import-position

D_META = {"direct": {}, "meta_mlp": {"hidden": 64}, "meta_gmlp": {"hidden": 64},
          "meta_gnn": {"d": 64, "rounds": 3}}


def deep_spec(task_name, layers):
  """The task's default target with `layers` hidden layers / blocks (see --layers)."""
  spec = tasks.default_spec(task_name)
  if isinstance(spec, specs.MLPSpec):
    return specs.MLPSpec((spec.d_in,) + spec.widths[1:-1][:1] * layers + (spec.d_out,),
                         spec.activation)
  if isinstance(spec, specs.TransformerSpec):
    return dataclasses.replace(spec, n_layers=layers)
  return dataclasses.replace(spec, n_enc_layers=layers, n_dec_layers=layers)


def build_step(task_name, name, intents=8, examples=128, layers=None):
  """(jitted train step, state, key, model) as this bench times them."""
  task = tasks.get(task_name, spec=None if layers is None else deep_spec(task_name, layers))
  model = meta.create(name, task.spec, task.feature_dim, D_META[name])
  opt = optax.adam(1e-3)
  state = train.init_state(model, task, opt, jax.random.key(0))
  step = jax.jit(train.make_train_step(
      model, task, opt, intents_per_step=intents, examples_per_intent=examples))
  return step, state, jax.random.key(1), model


def config_records(task_name, names, seeds_list, chunk, config_name=None, overrides=""):
  """One record per (model, seeds): the experiment config's training program.

  config_name: module under experiments/configs (default: the task's own);
  overrides: 'path=value;path2=value2' as in experiments.select (one value per
  path; widths are not re-matched, so set them with the option that changes
  the count)."""
  from neuroprog.train import loop  # pylint: disable=g-import-not-at-top
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  if root not in sys.path:       # experiments/ lives beside benchmarks/
    sys.path.insert(0, root)
  from experiments.pipelines import select  # pylint: disable=g-import-not-at-top
  config_name = config_name or task_name
  base = importlib.import_module(f"experiments.configs.{config_name}").get_config()
  if base.task != task_name:
    raise SystemExit(f"--config {config_name} trains task {base.task!r}, not {task_name!r}.")
  if overrides:
    axes = select.parse_grid(overrides)
    if any(len(values) != 1 for _, values in axes):
      raise SystemExit(f"--set {overrides!r}: one value per path.")
    base = select.candidates(base, axes, rematch=False)[0][1]
  for name in names:
    if name not in base.models:
      raise SystemExit(f"{task_name} config has no model {name!r}; it has {list(base.models)}.")
    for seeds in seeds_list:
      config = base.copy_and_resolve_references()
      config.seeds, config.models = seeds, (name,)
      task = loop.build_task(config)
      tr = loop.Trainer(config, task, name)
      state = tr.init()
      lowered = jax.jit(lambda s: tr.chunk(s, 0, chunk)).lower(state)
      cost = lowered.cost_analysis()
      cost = cost[0] if isinstance(cost, (list, tuple)) else cost
      flops = float(cost["flops"]) / chunk if cost and "flops" in cost else None
      t0 = time.perf_counter()
      common.block(tr.chunk(state, 0, chunk))        # compiles, then runs one chunk
      first = time.perf_counter() - t0
      before = common.matmul_gflops()
      sec = common.time_call(lambda: tr.chunk(state, 0, chunk), min_time=0.0, warmup=0)
      matmul = max(before, common.matmul_gflops())
      rec = {"bench": "meta_config", "task": task_name, "config": config_name,
             "overrides": overrides, "model": name,
             "params": tr.model.num_params(), "seeds": seeds,
             "intents_per_step": int(config.intents_per_step),
             "examples_per_intent": int(config.examples_per_intent),
             "compile_s": round(max(first - sec, 0.0), 1),
             "steps_per_s": round(chunk / sec, 3),
             "seed_steps_per_s": round(seeds * chunk / sec, 3),
             "flops_per_step": flops,
             "gflops_per_s": round(flops * chunk / sec / 1e9, 2) if flops else None,
             "matmul_fp32_gflops": round(matmul, 1), **common.machine()}
      if flops:
        rec["fraction_of_matmul"] = round(flops * chunk / sec / 1e9 / matmul, 3)
      common.emit(rec)


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--tasks", default="sumfirst,addmod,arc1d")
  ap.add_argument("--models", default=",".join(meta.NAMES))
  ap.add_argument("--intents", type=int, default=8)
  ap.add_argument("--examples", type=int, default=128)
  ap.add_argument("--layers", default="",
                  help="comma-separated depths of the target (default: the task's own)")
  ap.add_argument("--widths", default="bench", choices=("bench", "config"),
                  help="bench: d_meta = 64 for every model; config: the task's experiment config")
  ap.add_argument("--config_seeds", default="10",
                  help="--widths=config: seed counts timed besides 1, comma-separated")
  ap.add_argument("--config", default=None,
                  help="--widths=config: module under experiments/configs (default: the task's)")
  ap.add_argument("--set", default="", dest="overrides",
                  help="--widths=config: overrides 'path=value;path2=value2' (experiments.select "
                       "paths, e.g. examples_per_intent=16)")
  ap.add_argument("--chunk", type=int, default=2, help="steps per timed call (--widths=config)")
  args = ap.parse_args()
  if args.widths == "config":
    for task_name in args.tasks.split(","):
      seeds = sorted({1, *(int(x) for x in args.config_seeds.split(","))})
      config_records(task_name, args.models.split(","), seeds, args.chunk,
                     args.config, args.overrides)
    return
  depths = [int(x) for x in args.layers.split(",")] if args.layers else [None]
  for task_name, name, layers in ((t, m, l) for t in args.tasks.split(",")
                                  for m in args.models.split(",") for l in depths):
    step, state, key, model = build_step(task_name, name, args.intents, args.examples,
                                         layers)
    flops = common.flops_of(step, state, key)
    common.time_call(step, state, key, min_time=0.5)     # warm caches
    before = common.matmul_gflops()
    sec = common.time_call(step, state, key, min_time=2.0)
    matmul = max(before, common.matmul_gflops())
    record = {"bench": "meta", "task": task_name, "model": name,
              "params": model.num_params(), "intents": args.intents,
              "examples_per_intent": args.examples,
              "steps_per_s": round(1 / sec, 2),
              "flops_per_step": flops,
              "gflops_per_s": round(flops / sec / 1e9, 2) if flops else None,
              "matmul_fp32_gflops": round(matmul, 1),
              "matmul_fp32_gflops_before": round(before, 1),
              **common.machine()}
    if flops:
      record["fraction_of_matmul"] = round(flops / sec / 1e9 / matmul, 3)
    if layers is not None:
      ng = graphs.neural_graph(model.spec)
      size = ng.num_nodes + ng.num_edges
      record.update(layers=layers, target_params=programs.num_params(model.spec),
                    graph_nodes=ng.num_nodes, graph_edges=ng.num_edges,
                    ms_per_step=round(1e3 * sec, 2),
                    ms_per_1k_graph_elements=round(1e6 * sec / size, 3),
                    flops_per_graph_element=round(flops / size) if flops else None)
    common.emit(record)


if __name__ == "__main__":
  main()
