"""The run layer: config schemas, workdir fingerprints, the chunked loop, seeds, logging."""
import json
import logging
import os

import jax.numpy as jnp
import numpy as np
import pytest

from neuroprog.run import checkpoint, config as config_lib, logs, loop, seeds, workdir

SCHEMA = config_lib.ConfigSchema(
    "toy", {"name": config_lib.REQUIRED, "steps": 10, "width": 4, "opts": {}},
    positive_ints=("steps", "width"), sub_keys={"opts": ("a", "b")})


def test_schema_defaults_lookup_and_errors():
  c = SCHEMA.default_config(name="x")
  assert c.to_dict() == {"name": "x", "steps": 10, "width": 4, "opts": {}}
  assert SCHEMA.get({"name": "x"}, "width") == 4 and SCHEMA.get({"width": 7}, "width") == 7
  SCHEMA.validate(c)
  with pytest.raises(ValueError, match=r"Unknown config key\(s\) \['widht'\]; allowed: "
                                       r"\['name', 'opts', 'steps', 'width'\]"):
    SCHEMA.validate({"name": "x", "widht": 3})
  with pytest.raises(ValueError, match=r"missing required key\(s\) \['name'\]"):
    SCHEMA.validate({"steps": 3})
  with pytest.raises(ValueError, match=r"config.steps must be a positive int, got 0"):
    SCHEMA.validate({"name": "x", "steps": 0})
  with pytest.raises(ValueError, match=r"config.width must be a positive int, got True"):
    SCHEMA.validate({"name": "x", "width": True})
  with pytest.raises(ValueError, match=r"Unknown config.opts key\(s\) \['c'\]; allowed: \['a', 'b'\]"):
    SCHEMA.validate({"name": "x", "opts": {"a": 1, "c": 2}})
  with pytest.raises(KeyError, match="no key 'depth'"):
    SCHEMA.get({}, "depth")
  with pytest.raises(ValueError, match=r"needs a value for \['name'\]"):
    SCHEMA.default_config()
  # Dict defaults are copied: two configs never share one.
  a, b = SCHEMA.default_config(name="a"), SCHEMA.default_config(name="b")
  a.opts.a = 1
  assert "a" not in b.opts


def test_workdir_accepts_changed_eval_keys_only(tmp_path):
  d = str(tmp_path / "w")
  cfg = {"name": "x", "steps": 10, "guidance": 2.0}
  workdir.prepare(d, cfg, eval_keys=("guidance",))
  assert workdir.prepare(d, {**cfg, "guidance": 3.0}, eval_keys=("guidance",)) == {}
  assert json.load(open(os.path.join(d, "config.json")))["guidance"] == 3.0
  with pytest.raises(ValueError, match=r"guidance: 3.0 -> 4.0"):
    workdir.prepare(d, {**cfg, "guidance": 4.0})                 # not declared: refused
  with pytest.raises(ValueError, match=r"name: 'x' -> 'y'"):
    workdir.prepare(d, {**cfg, "name": "y", "guidance": 4.0}, eval_keys=("guidance",))


def test_extended_schema_drops_and_adds_keys():
  ext = SCHEMA.extend("toy2", {"depth": 2}, drop=("width",), positive_ints=("depth",))
  assert ext.keys == ("name", "steps", "opts", "depth")
  with pytest.raises(ValueError, match="config.depth must be a positive int"):
    ext.validate({"name": "x", "depth": -1})
  with pytest.raises(ValueError, match=r"\['width'\]"):
    ext.validate({"name": "x", "width": 3})


def test_workdir_refuses_any_changed_key_and_extends_steps_on_request(tmp_path):
  d = str(tmp_path / "w")
  cfg = {"name": "x", "steps": 10, "lr": 0.1}
  assert workdir.prepare(d, cfg) == {}
  assert workdir.prepare(d, cfg) == {}                       # a rerun of the same config
  with pytest.raises(ValueError, match=r"steps: 10 -> 20\).*extend=True"):
    workdir.prepare(d, {**cfg, "steps": 20})
  with pytest.raises(ValueError, match=r"lr: 0.1 -> 0.2\). Use a fresh workdir"):
    workdir.prepare(d, {**cfg, "lr": 0.2}, extend=True)
  with pytest.raises(ValueError, match=r"steps: 10 -> 5"):
    workdir.prepare(d, {**cfg, "steps": 5}, extend=True)    # extending never shrinks
  with pytest.raises(ValueError, match=r"lr: 0.1 -> 0.2; steps: 10 -> 20"):
    workdir.prepare(d, {**cfg, "steps": 20, "lr": 0.2}, extend=True)
  assert workdir.prepare(d, {**cfg, "steps": 20}, extend=True) == {"steps": [10, 20]}
  assert json.load(open(os.path.join(d, "config.json")))["steps"] == 20
  ext = workdir.extensions(d)
  assert len(ext) == 1 and ext[0]["steps"] == [10, 20]
  assert workdir.read_config(d).steps == 20
  with pytest.raises(ValueError, match="no config.json"):
    workdir.read_config(str(tmp_path))
  with pytest.raises(ValueError, match="does not exist"):
    workdir.read_config(str(tmp_path / "nope"))


def _counter_chunk():
  """A state whose value after step i is a known function of i."""
  def step(state, i):
    new = {"x": state["x"] + (i + 1).astype(jnp.float32)}
    return new, {"loss": new["x"] / 100.0}
  return loop.scan_chunks(step)


def test_train_loop_checkpoints_resumes_and_counts_time(tmp_path):
  state = {"x": jnp.zeros(())}
  mngr = checkpoint.manager(str(tmp_path / "ck"), keep=5)
  with pytest.raises(loop.Interrupted, match="stopped at step 6"):
    loop.train_loop("toy", state, _counter_chunk(), total=10, log_every=3,
                    checkpoint_every=3, manager=mngr, stop_at_step=5)
  assert sorted(mngr.all_steps()) == [3, 6]
  res = loop.train_loop("toy", state, _counter_chunk(), total=10, log_every=3,
                        checkpoint_every=3, manager=mngr)
  assert res.resumed_from == 6 and res.step == 10
  assert float(res.state["x"]) == sum(range(1, 11))          # as an uninterrupted run
  assert sorted(mngr.all_steps()) == [3, 6, 9, 10]
  seconds = json.load(open(str(tmp_path / "ck") + "_seconds.json"))
  assert set(seconds) == {"3", "6", "9", "10"}
  assert seconds["10"] >= seconds["6"] > 0                   # time before the kill counts
  again = loop.train_loop("toy", state, _counter_chunk(), total=10, log_every=3,
                          checkpoint_every=3, manager=mngr)
  assert again.train_seconds == pytest.approx(seconds["10"])  # nothing left to train
  plain = loop.train_loop("toy", state, _counter_chunk(), total=10, log_every=4,
                          checkpoint_every=100)              # no manager: in memory
  assert float(plain.state["x"]) == 55.0 and plain.resumed_from is None


def test_train_loop_names_the_non_finite_step_and_seed():
  def step(state, i):
    bad = jnp.where(i == 4, jnp.nan, 1.0)
    return state, {"loss": jnp.stack([jnp.float32(1.0), bad])}
  with pytest.raises(FloatingPointError, match=r"toy: non-finite loss nan at seed 11, step 5\."):
    loop.train_loop("toy", {"x": jnp.zeros(())}, loop.scan_chunks(step), total=8,
                    log_every=8, checkpoint_every=8, seed_labels=[10, 11])


def test_seed_selection_and_slicing():
  assert seeds.select_index([0.2, 0.9, 0.9], [1.0, 0.0, 0.0]) == 1
  assert seeds.select_index([], [0.1, 0.5, 0.3]) == 1
  with pytest.raises(ValueError, match="no validation or ID scores"):
    seeds.select_index([], [])
  assert seeds.index_of([3, 4, 5], 5) == 2 and seeds.index_of([3, 4], None) == 0
  with pytest.raises(ValueError, match=r"seed 7 was not trained in this run; its seeds are \[3, 4\]"):
    seeds.index_of([3, 4], 7)
  tree = {"w": np.arange(6).reshape(3, 2), "b": np.arange(3)}
  one = seeds.take(tree, 1)
  np.testing.assert_array_equal(one["w"], [2, 3])
  assert int(one["b"]) == 1
  with pytest.raises(ValueError, match=r"seed index 3 is out of range 0..2"):
    seeds.take(tree, 3)


def test_logging_is_configured_by_setup_only():
  # Importing the library attached no handler; setup attaches exactly one.
  logger = logging.getLogger("neuroprog")
  ours = lambda: [h for h in logger.handlers if h.get_name() == "neuroprog.run.logs"]
  logs.setup()
  logs.setup()
  assert len(ours()) == 1 and logger.level == logging.INFO
  assert logging.getLogger("orbax").level == logging.WARNING
  logs.setup(verbose=True)
  assert logging.getLogger("orbax").level == logging.INFO
  logs.setup()
  assert logging.getLogger("absl").level == logging.WARNING


def test_importing_the_library_configures_no_logging():
  import subprocess  # pylint: disable=g-import-not-at-top
  import sys  # pylint: disable=g-import-not-at-top
  code = ("import logging, neuroprog.train.loop, neuroprog.pnag.train, neuroprog.synthesis; "
          "print(len(logging.getLogger('neuroprog').handlers))")
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                       text=True, timeout=300)
  assert out.returncode == 0, out.stderr[-2000:]
  assert out.stdout.strip() == "0"


def test_restore_refuses_a_checkpoint_of_other_shapes_naming_the_arrays(tmp_path):
  import jax
  import optax
  params = {"dense": {"w": jnp.ones((3, 4)), "b": jnp.zeros(4)}}
  state = {"params": params, "opt": optax.adam(1e-3).init(params)}
  mngr = checkpoint.manager(str(tmp_path / "ck"), keep=2)
  checkpoint.save(mngr, 7, state)
  step, back = checkpoint.restore_latest(mngr, checkpoint.abstract_like(state))
  assert step == 7 and np.array_equal(back["params"]["dense"]["w"], np.ones((3, 4)))
  wider = {"dense": {"w": jnp.ones((3, 5)), "b": jnp.zeros(5)}}
  other = {"params": wider, "opt": optax.adam(1e-3).init(wider)}
  with pytest.raises(ValueError) as err:
    checkpoint.restore_latest(mngr, checkpoint.abstract_like(other))
  assert "6 arrays differ" in str(err.value)
  # A resume in a new process: a manager that never saved reads the shapes too.
  mngr.close()
  with pytest.raises(ValueError) as err:
    checkpoint.restore_latest(checkpoint.manager(str(tmp_path / "ck"), keep=2),
                              checkpoint.abstract_like(other))
  msg = str(err.value)
  assert "Checkpoint 7 in" in msg and "6 arrays differ" in msg
  assert "/mu/dense/w: saved (3, 4), expected (3, 5)" in msg
  # a state with an array the checkpoint lacks
  grown = {**params, "head": jnp.ones(2)}
  assert checkpoint.shape_mismatches({"dense/w": (3, 4), "dense/b": (4,)}, grown) == [
      "head: missing from the checkpoint"]
