#!/usr/bin/env bash
# The GPU check of a session lent an accelerator: meta-training lanes run side
# by side inside one wall-clock budget, then the clock analysis of every
# ADDMOD workdir and, with time left, ADDMOD's time to accuracy.
#
#   OUT=/tmp/out bash benchmarks/device_run.sh [LANE ...]        # on the GPU machine
#   OUT=/tmp/out STEPS=40 SEEDS=2 DEADLINE=300 bash benchmarks/device_run.sh  # CPU dry run
#
# A LANE is CONFIG:MODEL[,MODEL...] (a file of experiments/configs and the
# models it trains, in order, in one process and one workdir). The default
# lanes are the ADDMOD paper protocol (addmod.py: 5 rows x 10 seeds x 20,000
# steps; the two Meta-GNN rows are about 3.3 minutes of H200 training, the
# others not yet timed there):
#   addmod:meta_mlp,meta_gmlp addmod:meta_gnn,meta_gnn@library addmod:direct
# The 1D-ARC paper table (arc1d_paper.py, about 21 minutes of an H200 in all;
# BUILD_NOTES.md, "First GPU lease") needs three leases, one of these each:
#   arc1d_paper:meta_gnn    arc1d_paper:direct    arc1d_paper:meta_mlp,meta_gmlp
# and its rows are read from the three results.md files side by side.
#
# Why it is shaped so: the lease is 15 minutes in all, one command at most 10,
# so everything runs in one command with a hard deadline. The lanes train as
# processes at once (each its own workdir, 22% of the GPU memory): XLA
# compiles on the host while the other processes keep the GPU busy, and a
# model that is still training at the deadline is stopped without costing the
# others their results (train_and_evaluate writes results after each model).
# Checkpoints stay on the machine; what comes back is one tarball of the
# results, metrics, logs and clock analysis, and summary.md.
#
# The GPU image has jax, flax, optax, chex and orbax but not jraph,
# ml_collections or tensorboardX; the pure-Python libraries travel as wheels at
# the versions the project is tested with, fetched here once (carry `.whl`):
#   echo /.whl/ >> .git/info/exclude
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#     --implementation cp --platform manylinux2014_x86_64 -d .whl jraph==0.0.6.dev0 \
#     ml_collections==1.1.0 flax==0.12.8 optax==0.2.8 chex==0.1.92 \
#     orbax-checkpoint==0.12.8 tensorboardX==2.6.5
#
# Environment: OUT (required), STEPS / SEEDS (override the config's, for a dry
# run), DEADLINE (seconds from the start after which training is stopped;
# default 480), RUNS (workdir root, default /tmp/np_runs), PY (interpreter).
set -u
: "${OUT:?set OUT to the folder that collects the results}"
DEADLINE=${DEADLINE:-480}
RUNS=${RUNS:-/tmp/np_runs}
PY=${PY:-python3}
START=$(date +%s)

LANES=("$@")
[ ${#LANES[@]} -gt 0 ] || LANES=(addmod:meta_mlp,meta_gmlp addmod:meta_gnn,meta_gnn@library
                                 addmod:direct)
for lane in "${LANES[@]}"; do
  [ -f "experiments/configs/${lane%%:*}.py" ] && [ -n "${lane#*:}" ] && [ "$lane" != "${lane#*:}" ] \
    || { echo "bad lane '$lane': want CONFIG:MODEL[,MODEL...] with experiments/configs/CONFIG.py"; exit 2; }
done

mkdir -p "$OUT" "$RUNS"
export PYTHONUNBUFFERED=1
export XLA_PYTHON_CLIENT_MEM_FRACTION=${XLA_PYTHON_CLIENT_MEM_FRACTION:-0.22}

# Wheels (see the header) go first on the path.
if [ -d .whl ]; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 3
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
fi

elapsed() { echo $(( $(date +%s) - START )); }
left() { echo $(( DEADLINE - $(elapsed) )); }

{
  echo "# device_run $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD 2>/dev/null)"
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null
  $PY - <<'EOF' || exit 4
import jax, jax.numpy as jnp, flax, optax, orbax.checkpoint, jraph, ml_collections, tensorboardX
import neuroprog
print("jax", jax.__version__, "flax", flax.__version__, "optax", optax.__version__,
      "devices", jax.devices())
x = jnp.ones((256, 256))
print("smoke matmul", float((x @ x).sum()))
EOF
} 2>&1 | tee "$OUT/env.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "environment check failed"; exit 4; }

overrides=()
[ -n "${STEPS:-}" ] && overrides+=(--config.steps="$STEPS" --config.log_every=$(( STEPS / 2 ))
                                   --config.checkpoint_every=$(( STEPS / 2 )))
[ -n "${SEEDS:-}" ] && overrides+=(--config.seeds="$SEEDS")

lane_name() { local l=${1//,/_}; echo "${l/:/_}" | tr '@' '-'; }

train() {  # lane: one process training the lane's models of its config, in order
  local config=${1%%:*} models=${1#*:} name; name=$(lane_name "$1")
  [ "$(left)" -gt 10 ] || { echo "$name skipped at $(elapsed) s" | tee -a "$RUNS/status.txt"; return; }
  local tuple; tuple="('${models//,/\',\'}',)"
  timeout -s TERM "$(left)" $PY -m experiments.synthesize \
    --config="experiments/configs/$config.py" --config.models="$tuple" "${overrides[@]}" \
    --workdir="$RUNS/$name" > "$RUNS/$name.log" 2>&1
  echo "$name exit $? at $(elapsed) s" | tee -a "$RUNS/status.txt"
}

for lane in "${LANES[@]}"; do train "$lane" & done
wait

# Time to accuracy of every ADDMOD model (issue 22 item 3) in what time is
# left, only after the default lanes (its steps carry across machines: the
# GPU reproduces the CPU's curve).
if [ $# -eq 0 ] && [ "$(left)" -gt 120 ]; then
  timeout -s TERM "$(left)" $PY benchmarks/bench_tta.py --task addmod \
    --models meta_mlp,meta_gmlp,direct,meta_gnn --seeds "${SEEDS:-10}" \
    ${STEPS:+--max_steps $STEPS --eval_every $(( STEPS / 2 ))} \
    > "$RUNS/tta_addmod.jsonl" 2> "$RUNS/tta_addmod.log"
  echo "tta_addmod exit $? at $(elapsed) s" | tee -a "$RUNS/status.txt"
fi

# The clock of the validation-selected seed of each ADDMOD hypernetwork.
for lane in "${LANES[@]}"; do
  w=$(lane_name "$lane")
  if [ "${lane%%:*}" = addmod ] && [ "${lane#*:}" != direct ] && [ -f "$RUNS/$w/results.json" ]; then
    timeout -s TERM 60 $PY -m experiments.analyze_clock --workdir="$RUNS/$w" \
      --out="$RUNS/$w/clock" > "$RUNS/$w.clock.md" 2> "$RUNS/$w.clock.log"
    echo "clock $w exit $? at $(elapsed) s" | tee -a "$RUNS/status.txt"
  fi
done

{
  cat "$OUT/env.txt"; echo; cat "$RUNS/status.txt"
  for lane in "${LANES[@]}"; do
    w=$(lane_name "$lane"); echo; echo "## $lane"
    if [ -f "$RUNS/$w/results.md" ]; then cat "$RUNS/$w/results.md"
    else grep -E "step|ID" "$RUNS/$w.log" | tail -4; fi
    [ -f "$RUNS/$w.clock.md" ] && cat "$RUNS/$w.clock.md"
  done
  echo; echo "## bench_tta addmod"; cat "$RUNS"/tta_addmod.jsonl 2>/dev/null
} > "$OUT/summary.md"
(cd "$RUNS" && tar czf "$OUT/results.tar.gz" --exclude=checkpoints --exclude=tensorboard .)
cat "$OUT/summary.md"
echo "device_run done at $(elapsed) s"
