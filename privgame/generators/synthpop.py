"""Synthpop (CART): every column from a decision tree on the columns synthesised before it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Self

import numpy as np

from privgame.core.errors import DataError, ParameterError
from privgame.core.options import CATEGORICAL_SPLITS, GENERATOR_OPTIONS, MIN_SAMPLES_LEAF
from privgame.data.schema import Schema
from privgame.generators.base import SyntheticGenerator
from privgame.generators.registry import register

if TYPE_CHECKING:
    from privgame.generators._cart import Forest

__all__ = ["SynthpopGenerator"]


@register
class SynthpopGenerator(SyntheticGenerator):
    """The classic synthpop CART method.

    Columns are synthesised one after another in a visit sequence. The first is a bootstrap
    sample of its training values. Every later column has a decision tree (classification for a
    categorical column, Gini; regression for a continuous one, squared error) fitted on all the
    columns visited before it, with at least ``min_samples_leaf`` training rows per leaf and no
    depth limit. A synthetic row is dropped down each tree using the values it already has and
    takes a value drawn uniformly from the training values of the column in the leaf it lands
    in, so every synthetic value is a real training value of its column.

    How categorical predictors are split is ``categorical_splits``. ``"ordinal"`` splits them as
    ordered integer codes (``code <= t``); a tree can still isolate any category with two
    splits. ``"onehot"`` is hazy's synthpop (the paper's): each category but the first (code 0,
    the reference dropped by its one-hot encoding) is a yes/no indicator, so a split sends one
    category right and every other left. Neither tries subsets of categories as R's rpart does.

    Fitting uses no randomness: the trees are a deterministic function of the training array
    (ties between splits go to the earlier-visited predictor, then the lower threshold), so one
    fitted model sampled with a generator gives exactly what ``fit`` then ``sample`` with that
    generator gives.

    Parameters
    ----------
    visit_sequence : sequence of str, optional
        Column names to synthesise first, in this order; the used columns not named follow in
        table order. ``None`` (the default) visits the columns in table order.
    min_samples_leaf : int, default 5
        Minimum number of training rows in a leaf (synthpop's ``minbucket``); at least 1.
    categorical_splits : {"onehot", "ordinal"}, default "onehot"
        How a tree splits a categorical predictor: one category against the others (hazy's
        synthpop one-hot encoding, used by the paper), or by a threshold on its codes. On Adult
        ``onehot`` fits take 1.0-1.3 times as long as ``ordinal`` ones (REPRODUCTION.md, 4.9).
    """

    name = "synthpop"
    label = "Synthpop (CART)"
    parameters = GENERATOR_OPTIONS["synthpop"]
    deterministic_fit: ClassVar[bool] = True
    """``fit`` does not draw from ``rng``: the fitted trees depend on the training rows alone."""

    def __init__(
        self,
        visit_sequence: Sequence[str] | None = None,
        min_samples_leaf: int = MIN_SAMPLES_LEAF.default,
        categorical_splits: str = CATEGORICAL_SPLITS.default,
    ) -> None:
        self.visit_sequence = visit_sequence
        self.min_samples_leaf = min_samples_leaf
        self.categorical_splits = categorical_splits

    def fit(self, X: np.ndarray, schema: Schema, *, rng: np.random.Generator) -> Self:
        """Grow one tree per column after the first; ``rng`` is not used (see the class notes).

        Raises
        ------
        ParameterError
            For a bad ``min_samples_leaf``, ``visit_sequence`` or ``categorical_splits``, or no
            training row.
        DataError
            When ``X`` does not fit ``schema`` (shape, non-finite values, invalid codes).
        """
        from privgame.generators._cart import grow_forest

        min_leaf = MIN_SAMPLES_LEAF.check(self.min_samples_leaf)
        onehot = CATEGORICAL_SPLITS.check(self.categorical_splits) == "onehot"
        order = _visit_order(self.visit_sequence, schema)
        X = _check_array(X, schema)
        categorical = schema.is_categorical[order]
        ordered = X[:, order]
        forest = grow_forest(ordered, categorical, min_leaf, onehot=categorical & onehot)
        self.schema_ = schema
        self.order_ = order
        self.forest_ = forest
        # The training rows (visit order), which ``refit_swap`` starts from; its state is built
        # on the first refit.
        self._train = ordered
        self._refit_state = None
        return self

    def refit_swap(self, position: int, row: np.ndarray, *, rng: np.random.Generator) -> SynthpopGenerator:
        """The model ``fit`` gives on the training rows with row ``position`` replaced by ``row``.

        The returned model equals ``SynthpopGenerator(**self.get_params()).fit(X2, schema, rng=rng)``
        with ``X2`` the training array with that row replaced, array for array, so its samples are
        the same bit for bit; it is computed from this model, re-searching splits only on the
        nodes the old and new row pass through and growing afresh only the subtrees whose split
        changes; below 1,200 training rows, where that costs more than a fit, it is grown afresh.
        This model is not changed (it keeps what every refit starts from), and ``rng`` is not
        drawn from, as ``fit`` does not draw from it.

        Parameters
        ----------
        position : int
            The training row replaced, ``0 <= position < n``.
        row : ndarray of shape (d,)
            The new row, encoded as the training array (table column order).
        rng : numpy.random.Generator
            Not used (see the class notes); taken for the same signature as ``fit``.

        Returns
        -------
        SynthpopGenerator
            A new fitted model.

        Raises
        ------
        ParameterError
            When the model is not fitted, or ``position`` is not a row of its training array.
        DataError
            When ``row`` does not fit the schema (shape, non-finite values, invalid codes).
        """
        from privgame.generators import _cart

        train = self._training_rows()
        if not hasattr(self, "forest_") or train is None:
            raise ParameterError(
                "The synthpop generator must be fitted before refit_swap(); call fit() on the "
                "training rows first."
            )
        n = len(train)
        if isinstance(position, bool) or not isinstance(position, (int, np.integer)) or not 0 <= position < n:
            raise ParameterError(
                f"position must be a training row index 0..{n - 1}, got {position!r}; give the "
                "position of the row to replace in the training array."
            )
        values = _check_row(row, self.schema_)
        new = values[self.order_]
        categorical = self.schema_.is_categorical[self.order_]
        onehot = categorical & (CATEGORICAL_SPLITS.check(self.categorical_splits) == "onehot")
        min_leaf = MIN_SAMPLES_LEAF.check(self.min_samples_leaf)
        model = type(self)(**self.get_params())
        model.schema_ = self.schema_
        model.order_ = self.order_
        model._refit_state = None
        if n < _cart._REFIT_MIN_ROWS:
            # A fresh fit on the swapped rows is the faster way to the same forest here.
            model._train = train.copy()
            model._train[int(position)] = new
            model.forest_ = _cart.grow_forest(model._train, categorical, min_leaf, onehot=onehot)
            return model
        if self._refit_state is None:
            self._refit_state = _cart.RefitState(train, self.forest_, categorical, onehot, min_leaf)
        state = self._refit_state
        model.forest_ = _cart.refit_forest(state, int(position), new)
        # Its training array is made only if it is refitted or pickled in turn (most such
        # models are sampled once and dropped).
        model._train = None
        model._train_swap = (state, int(position), new)
        return model

    def _training_rows(self) -> np.ndarray | None:
        """The training rows in visit order (made from the refit it came from, on first use)."""
        swap = getattr(self, "_train_swap", None)
        if swap is not None:
            state, position, row = swap
            self._train = state.swapped(position, row)
            self._train_swap = None
        return getattr(self, "_train", None)

    def __getstate__(self) -> dict[str, Any]:
        # The refit state (tens of MB at Adult's size) is rebuilt by the first refit of a copy;
        # a model sent to a worker process travels without it.
        self._training_rows()
        state = dict(self.__dict__)
        if state.get("_refit_state") is not None:
            state["_refit_state"] = None
        return state

    def sample(self, n: int, *, rng: np.random.Generator) -> np.ndarray:
        """Draw ``n`` synthetic rows (one uniform per cell from ``rng``), in table column order."""
        from privgame.generators._cart import sample_forest

        self._check_fitted()
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ParameterError(f"Cannot sample {n!r} rows: n must be an integer >= 0.")
        forest: Forest = self.forest_
        u = rng.random((int(n), len(self.order_)))
        drawn = sample_forest(forest, u)
        if np.array_equal(self.order_, np.arange(len(self.order_))):
            return drawn  # visited in table order (the default): no reordering copy
        out = np.empty_like(u)
        out[:, self.order_] = drawn
        return out

    @property
    def metadata(self) -> dict[str, Any]:
        """The parameters, plus the visit sequence and tree sizes once fitted."""
        meta = super().metadata
        if hasattr(self, "forest_"):
            names = self.schema_.names
            meta["visit_sequence"] = [names[j] for j in self.order_]
            meta["n_leaves"] = [int(v) for v in self.forest_.n_leaves]
        return meta


def _visit_order(visit_sequence: Sequence[str] | None, schema: Schema) -> np.ndarray:
    """Positions of the used columns in visit order."""
    names = schema.names
    if visit_sequence is None:
        return np.arange(len(names))
    if isinstance(visit_sequence, str) or not isinstance(visit_sequence, Sequence):
        raise ParameterError(
            f"visit_sequence must be a list of column names, got {visit_sequence!r}; "
            f"for example {names[:2]!r}."
        )
    position = {name: j for j, name in enumerate(names)}
    excluded = {c.name for c in schema.columns} - set(names)
    problems: list[str] = []
    seen: set[str] = set()
    for name in visit_sequence:
        if not isinstance(name, str):
            problems.append(f"entry {name!r} is not a column name; give names as strings.")
        elif name in seen:
            problems.append(f"column {name!r} is listed twice; list each column once.")
        elif name in excluded:
            problems.append(
                f"column {name!r} is excluded from the schema; drop it from the visit sequence "
                "or change its role."
            )
        elif name not in position:
            problems.append(f"column {name!r} does not exist; choose among {names}.")
        else:
            seen.add(name)
    if problems:
        raise ParameterError("The synthpop visit_sequence does not fit the schema.", problems)
    first = [position[name] for name in visit_sequence]
    rest = [j for j in range(len(names)) if names[j] not in seen]
    return np.array(first + rest, dtype=np.int64)


def _check_row(row: np.ndarray, schema: Schema) -> np.ndarray:
    """``row`` as float64 after the checks ``fit`` makes of a training row."""
    values = np.asarray(row, dtype=np.float64)
    d = len(schema.used)
    if values.shape != (d,):
        raise DataError(
            f"The row to swap in has shape {values.shape} but the schema has {d} used columns; "
            "pass one encoded row (privgame.data.encoding.encode with the same schema), shape "
            f"({d},)."
        )
    problems = _cell_problems(
        values[None, :],
        schema,
        missing="column {name!r} is missing or infinite; swap in a complete row.",
        not_codes="column {name!r} is not a category code 0..{top}; encode the row with "
        "privgame.data.encoding.encode.",
    )
    if problems:
        raise DataError("The row to swap in does not fit the schema.", problems)
    return values


def _cell_problems(X: np.ndarray, schema: Schema, *, missing: str, not_codes: str) -> list[str]:
    """One problem per used column of ``X`` holding a non-finite value (``missing``) or a value
    that is not a category code (``not_codes``); the templates take ``name`` and ``top``."""
    from privgame.generators._cart import check_cells

    sizes = schema.cardinalities
    finite, bad_codes = check_cells(X, schema.is_categorical, sizes)
    problems: list[str] = []
    for j, col in enumerate(schema.used):
        if not finite[j]:
            problems.append(missing.format(name=col.name, top=sizes[j] - 1))
        elif bad_codes[j]:
            problems.append(not_codes.format(name=col.name, top=sizes[j] - 1))
    return problems


def _check_array(X: np.ndarray, schema: Schema) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    d = len(schema.used)
    if X.ndim != 2 or X.shape[1] != d:
        raise DataError(
            f"The training array has shape {X.shape} but the schema has {d} used columns; "
            "encode the table with privgame.data.encoding.encode and the same schema."
        )
    if len(X) == 0:
        raise ParameterError("The synthpop generator needs at least one training row.")
    problems = _cell_problems(
        X,
        schema,
        missing="column {name!r} holds missing or infinite values; drop those rows.",
        not_codes="column {name!r} holds values that are not category codes 0..{top}; encode the "
        "table with privgame.data.encoding.encode.",
    )
    if problems:
        raise DataError("The training array does not fit its schema.", problems)
    return X
