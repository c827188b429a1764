"""benchmarks/device_run.sh refuses bad lanes before any work (no GPU needed)."""
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.parametrize("lane", ["nosuch:meta_gnn", "addmod", "addmod:"])
def test_bad_lane_is_refused_naming_it(lane, tmp_path):
  # PY=false: if the lane check let the run through, the environment check
  # would fail with exit 4 instead.
  env = {**os.environ, "OUT": str(tmp_path), "PY": "false"}
  p = subprocess.run(["bash", "benchmarks/device_run.sh", "addmod:direct", lane], cwd=ROOT,
                     env=env, capture_output=True, text=True, timeout=60)
  assert p.returncode == 2
  assert f"bad lane '{lane}'" in p.stdout
  assert not os.listdir(tmp_path)


def test_good_lanes_pass_the_check(tmp_path):
  env = {**os.environ, "OUT": str(tmp_path), "PY": "false"}
  p = subprocess.run(["bash", "benchmarks/device_run.sh", "arc1d_paper:meta_gnn",
                      "addmod:meta_mlp,meta_gnn@library"], cwd=ROOT, env=env,
                     capture_output=True, text=True, timeout=60)
  # Past the check the run stops at its first use of PY: installing the
  # carried wheels (exit 3, where .whl/ exists) or the environment check (4).
  assert p.returncode in (3, 4) and "bad lane" not in p.stdout
