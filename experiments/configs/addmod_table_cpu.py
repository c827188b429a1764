"""ADDMOD-p, issue 22's table on the 2-core CPU: `addmod.py` (the paper's
1-layer Transformer, the 5 rows capacity-matched to 400,000 parameters, OOD p in
{23, 47, 61, 83, 89}, validation {53, 71}) at the paper's 10 seeds and 2,500
steps instead of 20,000, in one resumable command:

  python -m experiments.synthesize --config=experiments/configs/addmod_table_cpu.py \
      --workdir=workdirs/addmod_table_cpu
  python -m experiments.analyze_clock --workdir=workdirs/addmod_table_cpu \
      --out=workdirs/addmod_table_cpu/clock

Why 2,500 steps: it is what item 3's benchmark shows Meta-MLP and Meta-GNN need
to fit the training primes (`python benchmarks/bench_tta.py --task addmod
--models meta_mlp,meta_gnn --seeds 10 --steps 2500`: seed-mean ID exact match
0.95 at 1,750 and 2,250 steps with Muon, Meta-GNN with its earlier 1,000-step
warm-up; with the 500-step warm-up it now has, 2,000 steps against Meta-MLP's
1,750, on a 2-core AMD EPYC), and the most that fits the issue's 2-hour wall
for all five rows.

Measured with the settings as they stand (commit 2ee9db8, 2-core AMD EPYC
AVX-512, 2026-12-06 20:38-22:37 UTC, 1 h 59 min wall, with a `nice 19`
benchmark beside it for about an hour; training 49.1 / 8.6 / 6.7 / 27.3 / 24.6
minutes in row order): ID / val / OOD mean ± std over 10 seeds

  direct (Adam 4e-3)                      0.800 / 0.465 / 0.451 ± 0.127
  meta_mlp (Muon 8e-3)                    0.996 / 0.865 / 0.773 ± 0.111
  meta_gmlp (Adam 8e-3)                   0.903 / 0.586 / 0.534 ± 0.076
  meta_gnn (Muon 2e-3, warm-up 500)       0.984 / 0.760 / 0.707 ± 0.117
  meta_gnn@library (Adam 3e-4)            0.638 / 0.231 / 0.263 ± 0.085
  heuristic "a + b, never wrap"           - / 0.507 / 0.509

Issue 22's targets (Meta-MLP >= 0.93, Meta-GNN >= 0.90 and within 0.02 of
it) are missed. In item 3's runs validation accuracy was still rising at the
last step (the schedule decays there), so longer runs may read higher; the paper's
20,000 steps are `addmod.py`, a GPU job. Seeds 0-4 draw the keys and data of
`addmod_cpu.py`'s seeds (each seed draws its own, however many seeds a run
trains), but the rounding of XLA's CPU kernels depends on the host and on the
program's shape, and models trained near their stability edge move with it
(direct's seeds 0-4: 0.456 here, 0.586 on the Intel Xeon of `addmod_cpu.py`'s
rows; Meta-gMLP with Muon, val 0.683 on seeds 0-4 of a 10-seed run against 0.721
in its 5-seed select on this host). Meta-gMLP has since moved to Muon at 8e-3
(`addmod.py`): its row with it, a run of this command with
--config.models="('meta_gmlp',)" (commit d3dc50e, 590 s of training), reads
0.948 / 0.668 / 0.574 ± 0.134. Meta-GNN has since taken the intent's FiLM
gain (`addmod.py`, d = 21): its row with it, --config.models="('meta_gnn',)"
(commit d7f1cc6, 2026-12-07, 1,844 s of training with a `nice 19` select
beside it), reads 0.965 / 0.782 / 0.709 ± 0.074. The direct model has since
moved to Muon at 4e-3 (`addmod.py`): its row with it, --config.models="('direct',)"
(commit 4ffb7c1, 2026-12-07, 2,995 s of training alone), reads 1.000 / 0.566 /
0.562 ± 0.025. Meta-MLP has since taken intent jitter 0.1 (`addmod.py`): its
row with it, --config.models="('meta_mlp',)" (commit 83a4bb5, 2026-12-07, 394 s
of training alone), reads 0.987 / 0.898 / 0.769 ± 0.090. Meta-GNN has since
taken 16 primes per step (`addmod.py`'s INTENTS_PER_STEP): its row with it,
--config.models="('meta_gnn',)" (commit a15db54, 2026-12-07, 3,399 s of
training with a test run beside it), reads 0.988 / 0.842 / 0.755 ± 0.059,
0.014 below Meta-MLP; its step does twice the work, so the five rows in one
piece would now take about 2 h 20 min (a sum of the separate runs). README,
"ADDMOD at the paper's 10 seeds, on the CPU", has the per-prime table and the
clock of this run.

An extra row, not a selection (every setting chosen before; decided before
reading OOD never to replace the rows above): with the validation primes in
training, --config.val_intents="()" and --config.models="('meta_mlp',)" or
"('meta_gnn',)" (commit 40ec8a8, 2026-12-07, 2-core AMD EPYC; 685 s of
training with a test run beside it for the first 9 minutes, and 1,587 s alone), ID / OOD
read Meta-MLP 0.987 / 0.787 ± 0.071 and Meta-GNN 0.968 / 0.752 ± 0.048: the
gain is on 47 and 61, and 83 and 89 do not move (BUILD_NOTES.md "The validation
primes in training").
"""

from experiments.configs import addmod_cpu


def get_config():
  config = addmod_cpu.get_config()
  config.seeds = 10
  return config
