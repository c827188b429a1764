"""Every experiment config loads, validates, and its models are matched."""
import pytest

from experiments.configs import addmod, arc1d, sumfirst
from experiments.configs import test as test_config
from neuroprog import tasks
from neuroprog.train import loop

PAPER = {"sumfirst": sumfirst, "addmod": addmod, "arc1d": arc1d}


@pytest.mark.parametrize("name", sorted(PAPER))
def test_paper_configs_are_valid_and_capacity_matched(name):
  config = PAPER[name].get_config()
  loop.validate_config(config)
  task = loop.build_task(config)
  assert config.seeds == 10
  assert set(task.ood_intents).isdisjoint(task.train_intents)
  assert set(task.val_intents).isdisjoint(task.train_intents)
  budget = tasks.PARAM_BUDGETS[name]
  for model in config.models:
    n = loop.create_model(config, task, model).num_params()
    assert abs(n - budget) <= 0.1 * budget, (model, n)


def test_test_config_is_tiny_and_valid():
  config = test_config.get_config()
  loop.validate_config(config)
  assert config.steps <= 50 and config.seeds <= 2


@pytest.mark.parametrize("space", ["nb201", "mbv3", "darts", "test"])
def test_pnag_configs_are_valid(space):
  import importlib  # pylint: disable=g-import-not-at-top
  from neuroprog.pnag import train as pnag_train  # pylint: disable=g-import-not-at-top
  config = importlib.import_module(f"experiments.configs.pnag_{space}").get_config()
  pnag_train.validate_config(config)
  sp, ae_cfg, gen_cfg = pnag_train.build(config)
  assert ae_cfg.scales[-1] == sp.num_nodes and gen_cfg.scales == ae_cfg.scales
  assert config.num_samples == (64 if space == "test" else 1000)
