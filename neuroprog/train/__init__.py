"""Training: the pure step, multi-seed state, checkpoints and evaluation."""
from neuroprog.train.step import (TrainState, init_state, make_loss_fn,
                                  make_train_step, outputs_for)
