"""The step-wise consistency (SCC) ablation experiment (the PNAG paper's Figure 3).

Run by `python -m experiments.scc_ablation`. `run(config, workdir)` trains the full PNAG pipeline once per setting
t = 0, 1, ..., T of `ae.scc_num_scales` (SCC on the first t scales; 0 = no
SCC, T = every scale), once per seed of `scc_seeds` (None: config.seed
alone), each in workdir/scc_<t> (one seed) or workdir/scc_<t>_seed<s> (each
resumable), and writes workdir/results.json, results.md and
scc_ablation.png: validity, uniqueness, novelty and held-out reconstruction
against t (mean and standard deviation over seeds), and, per scale, the plain
validity of the samples' sub-architectures (`scale_validity`) and the held-out
reconstruction (`heldout_scale_reconstruction`), means over seeds.

Samples are decoded plainly (the schema's default `decode="argmax"`; a config
may still ask for "valid"): the constrained decoder would make validity 1 in every setting
and hide what SCC does to the generator.
"""

import json
import os
from typing import Any, Optional, Sequence

import ml_collections
import numpy as np

from neuroprog.pnag import train as pnag_train
from neuroprog.run import workdir as workdir_lib

METRICS = ("validity", "uniqueness", "novelty", "heldout_reconstruction")
# The PNAG keys, plus the settings to run (None: 0..T); plain decoding by default.
SCHEMA = pnag_train.SCHEMA.extend("SCC ablation", {"scc_settings": None, "scc_seeds": None,
                                                   "decode": "argmax"})


def default_config(**values):
  """An ablation ConfigDict with every key: the defaults, then `values`."""
  return SCHEMA.default_config(**values)


def settings(config) -> list[int]:
  """The t values: config.scc_settings, or 0..T (T = number of scales)."""
  base = _base(config)
  _, ae_cfg, _ = pnag_train.build(base)
  total = len(ae_cfg.scales)
  chosen = config.get("scc_settings")
  if chosen is None:
    return list(range(total + 1))
  chosen = [int(t) for t in chosen]
  bad = [t for t in chosen if not 0 <= t <= total]
  if bad or not chosen:
    raise ValueError(f"config.scc_settings={list(chosen)}: each must lie in 0..{total} "
                     f"(the {total} scales {ae_cfg.scales}).")
  return chosen


def _base(config):
  unknown = sorted(set(config.keys()) - set(SCHEMA.keys))
  if unknown:
    raise ValueError(f"Unknown config key(s) {unknown}; allowed: {sorted(SCHEMA.keys)}.")
  base = ml_collections.ConfigDict({k: v for k, v in config.items()
                                    if k not in ("scc_settings", "scc_seeds")})
  base.decode = SCHEMA.get(config, "decode")
  pnag_train.validate_config(base)
  if "scc_num_scales" in dict(base.get("ae", {})):
    raise ValueError("config.ae.scc_num_scales is what the ablation varies; remove it "
                     "and set config.scc_settings instead.")
  return base


def run(config, workdir: str, settings_override: Optional[Sequence[int]] = None) -> dict[str, Any]:
  """Trains and evaluates every setting; returns results.json's dict."""
  base = _base(config)
  ts = list(settings_override) if settings_override is not None else settings(config)
  # The ablation's own fingerprint; each setting's run checks its own too.
  workdir_lib.prepare(workdir, config, step_keys=pnag_train.STEP_KEYS)
  seeds = seeds_of(config)
  rows = []
  for t in ts:
    outs = []
    for seed in seeds:
      cfg = ml_collections.ConfigDict(base.to_dict())
      ae = dict(cfg.get("ae", {}))
      ae["scc_num_scales"] = t
      cfg.ae = ae
      cfg.seed = seed
      outs.append(pnag_train.train_and_evaluate(cfg, os.path.join(workdir, run_name(t, seeds,
                                                                                   seed))))
    rows.append(_row(t, seeds, outs))
  _, ae_cfg, _ = pnag_train.build(base)
  return _write({"space": base.space, "scales": list(ae_cfg.scales), "rows": rows}, workdir)


def run_name(t: int, seeds: Sequence[int], seed: int) -> str:
  """The folder of setting t, seed `seed` under the ablation's workdir."""
  return f"scc_{t}" if len(seeds) == 1 else f"scc_{t}_seed{seed}"


def _row(t, seeds, outs) -> dict[str, Any]:
  row = {"scc_scales": t, "seeds": list(seeds)}
  for m in METRICS:
    vals = np.array([o[m] for o in outs], float)
    row[m], row[m + "_std"] = float(vals.mean()), float(vals.std())
  for k in ("scale_validity", "heldout_scale_reconstruction"):
    if all(k in o for o in outs):
      row[k] = np.mean([o[k] for o in outs], 0).round(4).tolist()
  row["train_time_s"] = [o["train_time_s"] for o in outs]
  return row


def report(workdir: str) -> dict[str, Any]:
  """Rebuilds results.json, results.md and the figure from the finished runs'
  own results.json files (no training, no checkpoint loading: works for runs
  made by an earlier version of the code). Settings and seeds are read from
  the ablation's config.json."""
  with open(os.path.join(workdir, "config.json")) as f:
    config = ml_collections.ConfigDict(json.load(f))
  seeds = seeds_of(config)
  rows, scales, space = [], None, config.space
  for t in settings(config):
    outs = []
    for seed in seeds:
      path = os.path.join(workdir, run_name(t, seeds, seed), "results.json")
      if not os.path.exists(path):
        raise ValueError(f"{path} is missing: setting {t}, seed {seed} has not finished; "
                         "run the ablation first.")
      with open(path) as f:
        outs.append(json.load(f))
      scales = outs[-1]["scales"]
    rows.append(_row(t, seeds, outs))
  return _write({"space": space, "scales": scales, "rows": rows}, workdir)


def _write(result, workdir: str) -> dict[str, Any]:
  with open(os.path.join(workdir, "results.json"), "w") as f:
    json.dump(result, f, indent=1)
  with open(os.path.join(workdir, "results.md"), "w") as f:
    f.write(markdown(result) + "\n")
  plot(result, os.path.join(workdir, "scc_ablation.png"))
  return result


def seeds_of(config) -> tuple[int, ...]:
  """config.scc_seeds, or (config.seed,); ValueError unless distinct ints."""
  seeds = config.get("scc_seeds")
  if seeds is None:
    return (int(SCHEMA.get(config, "seed")),)
  seeds = tuple(seeds)
  if not seeds or len(set(seeds)) != len(seeds) or any(
      isinstance(x, bool) or not isinstance(x, int) for x in seeds):
    raise ValueError(f"config.scc_seeds={list(seeds)} must be distinct ints.")
  return seeds


def markdown(result) -> str:
  scales = result["scales"]
  n_list = ", ".join(map(str, scales))
  lines = ["| SCC on scales | " + " | ".join(METRICS)
           + f" | plain validity per scale (n = {n_list}) | held-out reconstruction per "
           f"scale (n = {n_list}) |",
           "|---|" + "---|" * (len(METRICS) + 2)]
  for r in result["rows"]:
    t = r["scc_scales"]
    label = "none" if t == 0 else f"first {t} ({', '.join(map(str, scales[:t]))})"
    cells = [f"{100 * r[m]:.1f}%" + (f" ± {100 * r[m + '_std']:.1f}" if len(r.get("seeds", [])) > 1
                                      else "") for m in METRICS]
    per_scale = [" / ".join(f"{100 * v:.1f}" for v in r.get(k, []))
                 for k in ("scale_validity", "heldout_scale_reconstruction")]
    lines.append(f"| {label} | " + " | ".join(cells) + " | " + " | ".join(per_scale) + " |")
  return "\n".join(lines)


def plot(result, path: str) -> None:
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use("Agg")
  from matplotlib import pyplot as plt  # pylint: disable=g-import-not-at-top
  ts = [r["scc_scales"] for r in result["rows"]]
  scales = result["scales"]
  fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
  for m in METRICS:
    ax.plot(ts, [100 * r[m] for r in result["rows"]], "o-", label=m)
  ax.set_xticks(ts)
  ax.set_xlabel(f"scales with SCC (of {len(scales)}: {scales})")
  ax.set_ylabel("% (final architectures)")
  ax.set_title(f"SCC ablation, {result['space']}")
  ax.legend(fontsize=7)
  # Right: plain validity of every scale's decoded sub-architecture, one line per setting.
  for r in result["rows"]:
    if r.get("scale_validity"):
      ax2.plot(scales[:len(r["scale_validity"])], [100 * v for v in r["scale_validity"]],
               "o-", ms=3, label=f"SCC on {r['scc_scales']}")
  ax2.set_xticks(scales)
  ax2.set_xlabel("scale (nodes n of the sub-architecture)")
  ax2.set_ylabel("% of samples valid at that scale")
  ax2.legend(fontsize=7)
  fig.tight_layout()
  fig.savefig(path, dpi=150)
  plt.close(fig)
