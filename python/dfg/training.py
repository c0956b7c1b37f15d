"""Training from Python: dfg.train for a whole run, dfg.Trainer for a loop
of one's own (docs/training.md).

    trained = dfg.train("model.onnx", x, y, val=(xv, yv), epochs=5,
                        memory_budget="50%", save="trained.onnx")
    trainer = dfg.Trainer("model.onnx", optimizer="sgd", lr=0.05)
    for xb, yb in batches:               # trainer.batch rows each
        loss = trainer.step(xb, yb)
    logits = trainer.predict(xb)

Both run the C library's dfg_trainer (include/dfg/trainer.h), the calls
`dfgc train --data` makes: one compiled training step (forward, backward
and the optimizer in one memory plan) and the model's inference program
given the trained weights; a step whose loss or update is not finite
raises dfg.Error naming it and keeps the weights of the last finite one.
"""
import os
import tempfile

import numpy as np

from . import _dfg
from .errors import python_words

_EXAMPLE_PREFIX = "example:"


_BYTE_UNITS = {"": 0, "B": 0, "KiB": 10, "MiB": 20, "GiB": 30}


def _budget_bytes(memory_budget):
    """memory_budget as bytes: an int, or digits with an optional unit
    ("130MiB", "512KiB", "2GiB"); 0 when it is neither."""
    if isinstance(memory_budget, bool):
        return 0
    if isinstance(memory_budget, int):
        return memory_budget
    if isinstance(memory_budget, float):
        return int(memory_budget) if memory_budget.is_integer() else 0
    if not isinstance(memory_budget, str):
        return 0
    digits = len(memory_budget) - len(memory_budget.lstrip("0123456789"))
    unit = _BYTE_UNITS.get(memory_budget[digits:])
    if digits == 0 or unit is None:
        return 0
    return int(memory_budget[:digits]) << unit


def memory_budget_options(memory_budget):
    """{"memory_budget_bytes": N} or {"memory_budget_percent": P} for a
    budget given as bytes (an int, or digits with an optional unit B, KiB,
    MiB or GiB: "130MiB") or as "P%" of the arena the step needs without
    one; {} for None."""
    if memory_budget is None:
        return {}
    if isinstance(memory_budget, str) and memory_budget.endswith("%"):
        try:
            percent = float(memory_budget[:-1])
        except ValueError:
            percent = -1.0
        if not 0.0 < percent <= 100.0:
            raise ValueError(f"memory_budget {memory_budget!r}: a percent "
                             "must lie in (0, 100]")
        return {"memory_budget_percent": percent}
    budget = _budget_bytes(memory_budget)
    if budget <= 0 or budget >= 2 ** 63:
        raise ValueError(f"memory_budget {memory_budget!r}: bytes (an int "
                         "above 0, below 2^63, or digits with a unit: "
                         "'130MiB', '512KiB', '2GiB') or a percent such as "
                         "'50%'")
    return {"memory_budget_bytes": budget}


def _model_source(model):
    """(kind, source, path of an ONNX file or None, temporary file)."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        # The trained model is saved from a file: the bytes are kept in one.
        handle = tempfile.NamedTemporaryFile(suffix=".onnx", delete=False)
        with handle:
            handle.write(bytes(model))
        return "onnx_path", handle.name, handle.name, handle.name
    if isinstance(model, str) and model.startswith(_EXAMPLE_PREFIX):
        return "example", model[len(_EXAMPLE_PREFIX):], None, None
    if isinstance(model, str) or hasattr(model, "__fspath__"):
        path = os.fspath(model)
        return "onnx_path", path, path, None
    raise TypeError("model must be an ONNX path, ONNX bytes or "
                    f"'example:NAME', not {type(model).__name__}")


class Trainer:
    """A model's training step and its evaluation, fed batch by batch.

    model: an ONNX file's path or bytes (a classifier whose first output
    is the prediction [N, classes], or any model's output for
    loss="mse"), or "example:NAME". loss: "cross_entropy" (labels int64
    [N]) or "mse" (targets float32 like the prediction). optimizer:
    "adam" (default), "adamw" or "sgd"; lr (adam 0.003, sgd 0.05),
    momentum (SGD's, Adam's beta1: 0.9), weight_decay (0), accumulate
    (micro-batches per optimizer step: 1). schedule: "constant",
    "cosine" (to 0 over decay_steps optimizer steps) or "step" (lr times
    gamma, 0.1, every step_size optimizer steps); warmup: optimizer steps
    of linear warm-up. memory_budget: bytes (an int, or "130MiB") or "P%"
    of the arena the step needs without one (activations are recomputed until it fits).
    precision: "f32" or "bf16" (activations and gradients stored in
    bf16). seed: dropout masks, shuffling, checkpoints. shapes binds an
    ONNX model's symbolic dimensions, as for dfg.compile.
    """

    def __init__(self, model, *, loss="cross_entropy", optimizer="adam",
                 lr=None, momentum=None, weight_decay=None, accumulate=1,
                 schedule="constant", decay_steps=None, step_size=None,
                 gamma=None, warmup=0, memory_budget=None, precision=None,
                 planner=None, seed=1, shapes=None):
        if schedule not in ("constant", "cosine", "step"):
            raise ValueError(f"schedule {schedule!r}: constant, cosine or "
                             "step")
        if (schedule == "cosine") != (decay_steps is not None) or \
                (schedule == "step") != (step_size is not None):
            raise ValueError("schedule 'cosine' takes decay_steps, 'step' "
                             "takes step_size (and gamma), and only they")
        kind, source, self.model_path, self._temporary = _model_source(model)
        if lr is None:
            lr = 0.05 if optimizer == "sgd" else 0.003
        options = {"loss": loss, "optimizer": optimizer, "lr": lr,
                   "momentum": momentum, "weight_decay": weight_decay,
                   "accumulate": int(accumulate), "decay_steps": decay_steps,
                   "step_size": step_size, "gamma": gamma,
                   "warmup": int(warmup), "precision": precision,
                   "planner": planner, "seed": int(seed)}
        options.update(memory_budget_options(memory_budget))
        if shapes is not None:
            shapes = {str(k): (int(v) if isinstance(v, int) else
                               tuple(int(d) for d in v))
                      for k, v in shapes.items()}
        self.loss = loss
        self.seed = int(seed)
        with python_words():
            self._handle = _dfg.trainer(kind, source, shapes, options)
        info = self._handle.info()
        self.batch = info["batch"]
        self.prediction_size = info["prediction_size"]
        self.weight_names = list(info["weights"])
        self.arena_bytes = info["arena_bytes"]
        self.weights_bytes = info["weights_bytes"]

    def __del__(self):
        temporary = getattr(self, "_temporary", None)
        if temporary:
            try:
                os.unlink(temporary)
            except OSError:
                pass

    @property
    def steps(self):
        """Finite training steps run (micro-batches)."""
        return self._handle.info()["steps"]

    def _x(self, x):
        x = np.ascontiguousarray(x, dtype=np.float32)
        if x.ndim < 1 or x.shape[0] != self.batch:
            raise ValueError(f"x has shape {x.shape}: the program runs "
                             f"batches of {self.batch}")
        return x

    def _y(self, y):
        dtype = np.int64 if self.loss == "cross_entropy" else np.float32
        return np.ascontiguousarray(y, dtype=dtype)

    def step(self, x, y):
        """One micro-batch of x and y (trainer.batch rows); returns its
        loss."""
        with python_words():
            return self._handle.step(self._x(x), self._y(y))

    def predict(self, x):
        """The model's prediction of batch x with the weights now, as
        float32 [batch, prediction_size]."""
        out = np.empty((self.batch, self.prediction_size), np.float32)
        with python_words():
            self._handle.predict(self._x(x), out)
        return out

    def evaluate(self, x, y):
        """(loss, accuracy) over a whole set, batch by batch: the loss
        the mean of the batches' (dfg's loss program, in eval form), the
        last batch padded with its last example (counted once in the
        accuracy); accuracy (the argmax against the class) for cross
        entropy only, else None."""
        x, y = np.asarray(x), self._y(y)
        rows = len(x)
        if rows == 0 or len(y) != rows:
            raise ValueError(f"evaluate: x has {rows} rows, y {len(y)}")
        losses, correct = [], 0
        out = np.empty((self.batch, self.prediction_size), np.float32)
        for at in range(0, rows, self.batch):
            index = np.minimum(np.arange(at, at + self.batch), rows - 1)
            with python_words():
                losses.append(self._handle.predict(self._x(x[index]), out,
                                                   y[index]))
            real = min(self.batch, rows - at)
            if self.loss == "cross_entropy":
                correct += int(np.sum(out[:real].argmax(axis=1) ==
                                      y[at:at + real]))
        accuracy = correct / rows if self.loss == "cross_entropy" else None
        return float(np.mean(losses)), accuracy

    def get_weight(self, name):
        """A copy of weight `name` (trained, or a batch norm's running
        statistic), float32, flat."""
        with python_words():
            return np.frombuffer(self._handle.weight(name), np.float32).copy()

    def set_weight(self, name, value):
        """Replaces weight `name` by value (as many elements)."""
        with python_words():
            self._handle.weight(name, np.ascontiguousarray(value, np.float32))

    def save(self, path):
        """Writes the ONNX model with the trained initializers (and batch
        norms' running statistics), in eval form; returns how many it
        replaced."""
        if not self.model_path:
            raise ValueError("save: the model is not an ONNX one")
        with python_words():
            return self._handle.save_onnx(self.model_path, os.fspath(path))

    def save_checkpoint(self, path, epoch=0, step=0, rng_state=0):
        """The weights, optimizer state and position, atomically."""
        with python_words():
            self._handle.save_checkpoint(os.fspath(path), int(epoch),
                                         int(step), int(rng_state), self.seed)

    def load_checkpoint(self, path):
        """Restores a checkpoint of the same model, options and seed;
        returns its position {epoch, step, rng_state}."""
        with python_words():
            epoch, step, rng, _ = self._handle.load_checkpoint(
                os.fspath(path), self.seed)
        return {"epoch": epoch, "step": step, "rng_state": rng}

    def program(self, **compile_options):
        """The trained model compiled for inference (a dfg.Program): the
        saved ONNX model, compiled."""
        from . import compile as compile_model
        handle = tempfile.NamedTemporaryFile(suffix=".onnx", delete=False)
        handle.close()
        try:
            self.save(handle.name)
            return compile_model(handle.name, **compile_options)
        finally:
            os.unlink(handle.name)

    def fit(self, x, y, epochs, val=None, checkpoint=None, resume=None,
            log=None):
        """Epochs over (x, y) in an order shuffled from the seed each
        epoch, the last partial batch dropped; with val=(x, y) evaluated
        after each; a checkpoint after each (atomically); from resume's
        epoch on, bit for bit as the run that wrote it. Returns the
        history: a dict per epoch (epoch, loss, val_loss, val_accuracy).
        log(text) receives dfgc train's lines."""
        x = np.ascontiguousarray(x, np.float32)
        y = self._y(y)
        if len(x) != len(y) or len(x) < self.batch:
            raise ValueError(f"x has {len(x)} rows, y {len(y)}: both need "
                             f"the same count, one batch ({self.batch}) at "
                             "least")
        rng = np.random.RandomState(self.seed)
        done = self.load_checkpoint(resume)["epoch"] if resume else 0
        for _ in range(done):
            rng.permutation(len(x))
        history = []
        for epoch in range(done, epochs):
            order = rng.permutation(len(x))
            losses = [self.step(x[order[at:at + self.batch]],
                                y[order[at:at + self.batch]])
                      for at in range(0, len(x) - self.batch + 1,
                                      self.batch)]
            record = {"epoch": epoch + 1, "loss": float(np.mean(losses))}
            if log:
                log(f"epoch {epoch + 1}: loss {record['loss']:.6f}")
            if val is not None:
                record["val_loss"], record["val_accuracy"] = \
                    self.evaluate(*val)
                if log:
                    log(f"val_loss={record['val_loss']:.6f} "
                        f"val_accuracy={record['val_accuracy']}")
            if checkpoint:
                self.save_checkpoint(checkpoint, epoch + 1, self.steps)
            history.append(record)
        return history


def train(model, x, y, *, val=None, epochs=10, batch=None,
          loss="cross_entropy", optimizer="adam", lr=None,
          memory_budget=None, precision=None, save=None, checkpoint=None,
          resume=None, seed=1, schedule="constant", warmup=0, step_size=None,
          gamma=None, shapes=None, log=None, **options):
    """Trains model on (x, y) for `epochs` and returns the Trainer holding
    the trained weights (trainer.predict, .evaluate, .save, .program(),
    .history: the per-epoch losses and validation figures).

    batch: the batch the model must be compiled for (an ONNX model's
    input batch, bound through shapes for a symbolic one). schedule
    "cosine" decays lr to 0 over the run's optimizer steps after the
    warm-up. save: the trained ONNX model's path. checkpoint: a file
    written after every epoch; resume: one to go on from. Other keyword
    arguments (momentum, weight_decay, accumulate, planner) go to
    Trainer."""
    common = dict(loss=loss, optimizer=optimizer, lr=lr,
                  memory_budget=memory_budget, precision=precision,
                  seed=seed, warmup=warmup, shapes=shapes, **options)
    if schedule == "step":
        common.update(schedule="step", step_size=step_size, gamma=gamma)
    elif step_size is not None or gamma is not None:
        raise ValueError("step_size and gamma go with schedule='step'")
    trainer = Trainer(model, **common)
    if batch is not None and batch != trainer.batch:
        raise ValueError(f"batch={batch}: the model is compiled for batch "
                         f"{trainer.batch} (bind a symbolic batch with "
                         "shapes=)")
    if schedule == "cosine":
        steps = (epochs * (len(x) // trainer.batch) //
                 int(options.get("accumulate", 1))) - int(warmup)
        if steps < 1:
            raise ValueError(f"schedule 'cosine': {steps} optimizer steps "
                             "after the warm-up")
        trainer = Trainer(model, schedule="cosine", decay_steps=steps,
                          **common)
    elif schedule not in ("constant", "step"):
        raise ValueError(f"schedule {schedule!r}: constant, cosine or step")
    trainer.history = trainer.fit(x, y, epochs, val=val,
                                  checkpoint=checkpoint, resume=resume,
                                  log=log)
    if save is not None:
        trainer.save(save)
    return trainer
