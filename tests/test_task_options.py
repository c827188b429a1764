"""config.task_options: a task's own options (addmod's loss_classes) reach the
task that training builds, change its training step, are refused by name
before any work, and an older workdir without the key resumes unchanged."""
import jax
import numpy as np
import pytest

import conftest
from experiments.configs import test as test_config
from experiments.pipelines import select
from neuroprog.train import loop
from neuroprog.run import workdir as workdir_lib

_addmod_config = conftest.tiny_addmod_config


def test_build_task_passes_the_options():
  assert loop.build_task(_addmod_config()).loss_classes == "all"
  config = _addmod_config(task_options={"loss_classes": "residues"})
  loop.validate_config(config)
  assert loop.build_task(config).loss_classes == "residues"


def test_bad_options_are_refused_before_any_work():
  config = _addmod_config(task_options={"loss_class": "residues"})
  with pytest.raises(ValueError, match=r"config.task_options: \['loss_class'\] not options of "
                     r"task 'addmod'; allowed: \['loss_classes', 'loss_logit_scale', 'moduli', "
                     r"'vocabulary_operands'\]"):
    loop.validate_config(config)
  config = _addmod_config(task_options={"loss_classes": "masked"})
  with pytest.raises(ValueError, match=r"loss_classes='masked'; allowed: 'all', 'residues'"):
    loop.validate_config(config)
  config = test_config.get_config()
  config.task_options = {"loss_classes": "residues"}
  with pytest.raises(ValueError, match=r"not options of task 'sumfirst'; allowed: none"):
    loop.validate_config(config)


def test_the_residue_loss_changes_training_and_a_grid_reaches_it(tmp_path):
  states = []
  for options in ({}, {"loss_classes": "residues"}):
    config = _addmod_config(task_options=options)
    tr = loop.Trainer(config, loop.build_task(config), "meta_mlp")
    state, metrics = tr.chunk(tr.init(), 0, 2)
    states.append(jax.tree_util.tree_leaves(state.params))
  assert max(float(np.abs(a - b).max()) for a, b in zip(*states)) > 1e-5
  (_, cfg), = select.candidates(_addmod_config(), [("task_options.loss_classes", ["residues"])])
  assert loop.build_task(cfg).loss_classes == "residues"


def test_a_workdir_from_before_the_key_compares_equal(tmp_path):
  wd = tmp_path / "wd"
  wd.mkdir()
  stored = _addmod_config().to_dict()
  del stored["task_options"]
  (wd / workdir_lib.CONFIG_FILE).write_text(workdir_lib.config_json(stored))
  assert workdir_lib.differences(str(wd), _addmod_config(), added_keys=loop.ADDED_KEYS) == {}
  changed = _addmod_config(task_options={"loss_classes": "residues"})
  assert workdir_lib.differences(str(wd), changed, added_keys=loop.ADDED_KEYS) == {
      "task_options": [{}, {"loss_classes": "residues"}]}


def test_intents_of_the_config_are_parsed_with_the_options():
  train = ("p=79", "p=80", "p=81", "p=97")
  config = _addmod_config(train_intents=train)
  with pytest.raises(ValueError, match=r"p=80 is not prime"):
    loop.build_task(config)
  config = _addmod_config(train_intents=train, task_options={"moduli": "all"})
  loop.validate_config(config)
  assert loop.build_task(config).train_intents == (79, 80, 81, 97)
