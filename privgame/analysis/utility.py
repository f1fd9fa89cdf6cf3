"""Utility beside privacy: how much a run's synthetic data keeps of its real data.

Three figures, each measured on ``samples`` fresh synthetic datasets of the run's generator
(fitted on D with the run's parameters, |D| rows each), so each carries its spread over samples:

fidelity
    The mean over columns of the total variation distance (TVD) between a column's distribution in
    D and in the synthetic data (:func:`total_variation`); continuous columns are compared in
    quantile bins of D. 0 means identical distributions, 1 disjoint ones. ``1 - TVD`` of a column
    is SDMetrics' *TVComplement*.
association
    The mean absolute difference between the pairwise association matrices of D and of the
    synthetic data (:func:`association_matrix`, :func:`association_difference`): 0 means every
    pair of columns is as strongly associated as in D. It plays the part of SDMetrics'
    *ContingencySimilarity* (categorical pairs) and *CorrelationSimilarity* (continuous pairs).
downstream
    Train on synthetic, test on real (:func:`downstream_score`): a model predicts one column
    (``target_column``) from the others, trained on the synthetic data and scored on the run's
    holdout, the real records not in D; ``downstream_real`` is the same model trained on D and
    scored on the same holdout. This is SDMetrics' *ML efficacy*.

SDMetrics itself is not used (its releases pin pandas below 3); these few metrics are written
here with numpy and scikit-learn.

The samples are drawn from ``stream(seed, 0, Role.UTILITY, 0, i)`` and the models seeded from
``stream(seed, 0, Role.UTILITY, 1, i)``, the model trained on D from
``stream(seed, 0, Role.UTILITY, 3)``, so the figures depend only on the run and ``samples``: the
first ``k`` samples of a larger measurement are the ``k`` samples of a smaller one, and the score
of the model trained on D is the same whatever the number of samples.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.metrics import balanced_accuracy_score, r2_score

from privgame.core.defaults import UTILITY_SAMPLES
from privgame.core.errors import ParameterError, RunError
from privgame.core.seeding import Role, sklearn_seed, stream
from privgame.data import encode, fingerprint_table
from privgame.data.schema import CATEGORICAL, Schema
from privgame.games.plan import run_split
from privgame.generators import create
from privgame.settings.run_spec import RunSpec
from privgame.store.folders import RunFolder

__all__ = [
    "BALANCED_ACCURACY",
    "DEFAULT_SAMPLES",
    "R2",
    "Spread",
    "UtilityReport",
    "association_difference",
    "association_matrix",
    "default_target_column",
    "downstream_score",
    "family_target_column",
    "measure_utility",
    "per_column_table",
    "spread",
    "stored_utility",
    "total_variation",
    "unmeasured",
    "utility_lines",
    "utility_row",
    "utility_split",
]

DEFAULT_SAMPLES = UTILITY_SAMPLES
MAX_SAMPLES = 100
QUANTILE_BINS = 10
"""Continuous columns are compared in (up to) this many quantile bins of the real data."""
N_TREES = 50
"""Trees of the downstream model's random forest."""
MAX_TEST_ROWS = 10_000
"""The holdout records a run's downstream models are scored on, at most (a seeded random subset)."""
BALANCED_ACCURACY = "balanced accuracy"
R2 = "R²"

Table = pd.DataFrame | np.ndarray


@dataclass(frozen=True)
class Spread:
    """A figure measured on several synthetic samples.

    Attributes
    ----------
    mean : float
        The mean over the samples.
    sd : float
        The sample standard deviation over the samples (0 for a single sample).
    n : int
        The number of synthetic samples.
    """

    mean: float
    sd: float
    n: int

    def to_dict(self) -> dict[str, Any]:
        """``{"mean": ..., "sd": ..., "n": ...}``."""
        return {"mean": self.mean, "sd": self.sd, "n": self.n}

    @classmethod
    def from_dict(cls, data: Any) -> Spread:
        """Rebuild a spread from :meth:`to_dict` output.

        Raises
        ------
        ValueError
            When ``data`` is not such a mapping.
        """
        if not isinstance(data, Mapping):
            raise ValueError("a spread must be an object with mean, sd and n")
        mean, sd, n = data.get("mean"), data.get("sd"), data.get("n")
        if not all(_is_real(v) for v in (mean, sd)) or isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError("a spread needs a number mean, a number sd and a whole number n >= 1")
        return cls(mean=float(mean), sd=float(sd), n=n)

    def text(self, digits: int = 3) -> str:
        """``"0.123 ± 0.004"``: the mean and the standard deviation over samples."""
        return f"{self.mean:.{digits}f} ± {self.sd:.{digits}f}"


def _is_real(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def spread(values: Any) -> Spread:
    """The mean and sample standard deviation (ddof 1; 0 for one value) of ``values``."""
    array = np.asarray(values, dtype=np.float64)
    if array.size == 0:
        raise ValueError("a spread needs at least one value")
    sd = float(array.std(ddof=1)) if array.size > 1 else 0.0
    return Spread(mean=float(array.mean()), sd=sd, n=int(array.size))


@dataclass(frozen=True)
class UtilityReport:
    """The utility figures of one run (see the module's documentation for each figure).

    Attributes
    ----------
    fidelity : Spread
        Mean over columns of the total variation distance between D and a synthetic sample;
        0 means identical.
    association : Spread
        Mean absolute difference of the pairwise association matrices of D and a sample;
        0 means identical.
    downstream : Spread or None
        The score on the holdout of the model trained on each synthetic sample (balanced accuracy
        for a categorical target column, R² for a continuous one); None without a target column.
    downstream_real : float or None
        The same model trained on D, scored on the same holdout.
    target_column : str or None
        The column the downstream model predicts.
    per_column : dict of str to Spread
        The total variation distance of each column.
    samples : int
        The number of synthetic samples.
    downstream_metric : str or None
        ``"balanced accuracy"`` or ``"R²"``: what ``downstream`` measures.
    """

    fidelity: Spread
    association: Spread
    downstream: Spread | None
    downstream_real: float | None
    target_column: str | None
    per_column: dict[str, Spread]
    samples: int
    downstream_metric: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (what ``utility.json`` holds)."""
        return {
            "fidelity": self.fidelity.to_dict(),
            "association": self.association.to_dict(),
            "downstream": None if self.downstream is None else self.downstream.to_dict(),
            "downstream_real": self.downstream_real,
            "downstream_metric": self.downstream_metric,
            "target_column": self.target_column,
            "per_column": {name: s.to_dict() for name, s in self.per_column.items()},
            "samples": self.samples,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> UtilityReport:
        """Rebuild a report from :meth:`to_dict` output.

        Raises
        ------
        ValueError
            When ``data`` does not hold a report.
        """
        try:
            per_column = data["per_column"]
            if not isinstance(per_column, Mapping):
                raise ValueError("per_column must be an object")
            real = data.get("downstream_real")
            if real is not None and not _is_real(real):
                raise ValueError("downstream_real must be a number or null")
            samples = data["samples"]
            if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
                raise ValueError("samples must be a whole number >= 1")
            target, metric = data.get("target_column"), data.get("downstream_metric")
            if not all(v is None or isinstance(v, str) for v in (target, metric)):
                raise ValueError("target_column and downstream_metric must be text or null")
            downstream = data.get("downstream")
            return cls(
                fidelity=Spread.from_dict(data["fidelity"]),
                association=Spread.from_dict(data["association"]),
                downstream=None if downstream is None else Spread.from_dict(downstream),
                downstream_real=None if real is None else float(real),
                target_column=target,
                per_column={str(k): Spread.from_dict(v) for k, v in per_column.items()},
                samples=samples,
                downstream_metric=metric,
            )
        except (KeyError, TypeError) as error:
            raise ValueError(f"not a utility report: {error}") from None


# -- pure metrics ------------------------------------------------------------------------------


def _as_array(table: Table, schema: Schema) -> np.ndarray:
    """The encoded array of ``table`` (a DataFrame is encoded with ``schema``)."""
    if isinstance(table, pd.DataFrame):
        return encode(table, schema)
    array = np.asarray(table, dtype=np.float64)
    if array.ndim != 2 or array.shape[1] != len(schema.used):
        raise ParameterError(
            f"An encoded table of shape {array.shape} does not fit the schema's {len(schema.used)} used "
            "columns; pass the table itself, or encode it with privgame.data.encode."
        )
    return array


def _quantile_edges(real: np.ndarray, bins: int = QUANTILE_BINS) -> np.ndarray:
    """The inner bin edges: the real column's quantiles, each once."""
    return np.unique(np.quantile(real, np.linspace(0.0, 1.0, bins + 1)[1:-1]))


def _binned(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    # Bins (e_{i-1}, e_i]: a mass of ties at a low edge (capital-gain = 0) gets a bin of its own.
    return np.searchsorted(edges, values, side="left")


def _column_tvd(real: np.ndarray, synth: np.ndarray, categorical: bool, cardinality: int) -> float:
    if categorical:
        r, s = real.astype(np.int64), synth.astype(np.int64)
        k = max(cardinality, int(r.max(initial=-1)) + 1, int(s.max(initial=-1)) + 1)
    else:
        edges = _quantile_edges(real)
        r, s = _binned(real, edges), _binned(synth, edges)
        k = len(edges) + 1
    p = np.bincount(r, minlength=k) / len(r)
    q = np.bincount(s, minlength=k) / len(s)
    return float(0.5 * np.abs(p - q).sum())


def total_variation(real: Table, synth: Table, schema: Schema) -> dict[str, float]:
    """The total variation distance between each column's distribution in two tables.

    TVD = ½ Σ |p(v) − q(v)| over a column's values v: 0 for identical distributions, 1 for
    disjoint ones. A categorical column is compared value by value; a continuous column in up to
    10 quantile bins of ``real`` (each bin holding about a tenth of the real rows; values beyond
    the real range fall in the outer bins). ``1 - TVD`` is SDMetrics' *TVComplement* (which
    compares continuous columns with a Kolmogorov–Smirnov statistic instead of bins).

    Parameters
    ----------
    real, synth : DataFrame or ndarray
        The tables (encoded arrays, or tables that hold the schema's used columns).
    schema : Schema

    Returns
    -------
    dict of str to float
        The distance of each used column, in schema order.
    """
    r, s = _as_array(real, schema), _as_array(synth, schema)
    if len(r) == 0 or len(s) == 0:
        raise ParameterError("Both tables need at least one row to compare their distributions.")
    cards = schema.cardinalities
    return {
        col.name: _column_tvd(r[:, j], s[:, j], col.role == CATEGORICAL, int(cards[j]))
        for j, col in enumerate(schema.used)
    }


def _cramers_v(a: np.ndarray, b: np.ndarray) -> float:
    """Cramér's V of two code columns (0 when either has a single value)."""
    _, ai = np.unique(a, return_inverse=True)
    _, bi = np.unique(b, return_inverse=True)
    ka, kb = int(ai.max()) + 1, int(bi.max()) + 1
    if min(ka, kb) < 2:
        return 0.0
    n = len(a)
    observed = np.bincount(ai * kb + bi, minlength=ka * kb).reshape(ka, kb).astype(np.float64)
    expected = np.outer(observed.sum(1), observed.sum(0)) / n
    chi2 = float(((observed - expected) ** 2 / expected).sum())
    return float(min(1.0, math.sqrt(chi2 / (n * (min(ka, kb) - 1)))))


def _correlation_ratio(codes: np.ndarray, values: np.ndarray) -> float:
    """The correlation ratio η of a continuous column on a categorical one (0 for a constant)."""
    _, groups = np.unique(codes, return_inverse=True)
    total = float(((values - values.mean()) ** 2).sum())
    if total <= 0.0:
        return 0.0
    counts = np.bincount(groups)
    means = np.bincount(groups, weights=values) / counts
    between = float((counts * (means - values.mean()) ** 2).sum())
    return float(min(1.0, math.sqrt(between / total)))


def _abs_pearson(a: np.ndarray, b: np.ndarray) -> float:
    """|Pearson's r| (0 when either column is constant)."""
    da, db = a - a.mean(), b - b.mean()
    denominator = math.sqrt(float((da**2).sum()) * float((db**2).sum()))
    if denominator <= 0.0:
        return 0.0
    return float(min(1.0, abs(float((da * db).sum())) / denominator))


def association_matrix(table: Table, schema: Schema) -> pd.DataFrame:
    """How strongly each pair of columns is associated, from 0 (independent) to 1.

    Categorical–categorical pairs: Cramér's V. Categorical–continuous pairs: the correlation ratio
    η of the continuous column on the categorical one. Continuous–continuous pairs: the absolute
    value of Pearson's correlation (the strength, not the sign). A constant column is associated
    with nothing (0). The diagonal is 1.

    Parameters
    ----------
    table : DataFrame or ndarray
        The table (an encoded array, or a table that holds the schema's used columns).
    schema : Schema

    Returns
    -------
    DataFrame
        A symmetric matrix indexed by the used columns' names.
    """
    X = _as_array(table, schema)
    if len(X) < 2:
        raise ParameterError("A table needs at least two rows to measure the associations of its columns.")
    categorical = schema.is_categorical
    d = X.shape[1]
    out = np.eye(d)
    for i in range(d):
        for j in range(i + 1, d):
            a, b = X[:, i], X[:, j]
            if categorical[i] and categorical[j]:
                value = _cramers_v(a, b)
            elif categorical[i]:
                value = _correlation_ratio(a, b)
            elif categorical[j]:
                value = _correlation_ratio(b, a)
            else:
                value = _abs_pearson(a, b)
            out[i, j] = out[j, i] = value
    return pd.DataFrame(out, index=schema.names, columns=schema.names)


def association_difference(real: Table, synth: Table, schema: Schema) -> float:
    """The mean absolute difference of two tables' association matrices, over pairs of columns.

    0 means every pair of columns is as strongly associated in ``synth`` as in ``real``; at most 1.
    It plays the part of SDMetrics' *ContingencySimilarity* (categorical pairs) and
    *CorrelationSimilarity* (continuous pairs), which are ``1 -`` a distance per pair. A table of
    a single column has no pair: 0.

    Parameters
    ----------
    real, synth : DataFrame or ndarray
        The tables (see :func:`association_matrix`).
    schema : Schema
    """
    return _mean_gap(association_matrix(real, schema), association_matrix(synth, schema))


def _mean_gap(a: pd.DataFrame, b: pd.DataFrame) -> float:
    """The mean absolute difference of two association matrices above the diagonal (0 without pairs)."""
    upper = np.triu_indices(a.shape[0], k=1)
    if len(upper[0]) == 0:
        return 0.0
    return float(np.abs(a.to_numpy()[upper] - b.to_numpy()[upper]).mean())


def _target_index(schema: Schema, target: str) -> int:
    names = schema.names
    if target not in names:
        raise ParameterError(
            f"{target!r} is not a column the generator uses, so it cannot be the target column of "
            f"the downstream model. Choose one of: {', '.join(names)}."
        )
    if len(names) < 2:
        raise ParameterError(
            "The table has a single used column: a downstream model needs other columns to predict "
            "it from. Measure the utility without a target column."
        )
    return names.index(target)


def _model(categorical_target: bool, seed: int) -> Any:
    kind = RandomForestClassifier if categorical_target else RandomForestRegressor
    return kind(n_estimators=N_TREES, min_samples_leaf=2, n_jobs=1, random_state=seed)


def downstream_score(train: Table, test: Table, target: str, schema: Schema, seed: int) -> float:
    """Train a model on ``train`` to predict ``target`` from the other columns; score it on ``test``.

    The model is a scikit-learn random forest of 50 trees (classifier for a categorical target,
    regressor for a continuous one; categorical columns enter as their codes, which trees split
    like any number), on one thread. The score is the balanced accuracy (the mean recall over the classes in
    ``test``; chance is 1 / classes) for a categorical target, R² for a continuous one. Trained
    on synthetic data and tested on real data, this is SDMetrics' *ML efficacy*.

    Parameters
    ----------
    train, test : DataFrame or ndarray
        The training and test tables (encoded arrays, or tables holding the used columns).
    target : str
        The column to predict.
    schema : Schema
    seed : int
        The model's ``random_state`` (see :func:`privgame.core.seeding.sklearn_seed`).

    Raises
    ------
    ParameterError
        When ``target`` is not a used column (naming the columns), or is the only one.
    """
    j = _target_index(schema, target)
    tr, te = _as_array(train, schema), _as_array(test, schema)
    if len(tr) == 0 or len(te) == 0:
        raise ParameterError("The downstream model needs at least one training row and one test row.")
    categorical_target = bool(schema.is_categorical[j])
    keep = [k for k in range(tr.shape[1]) if k != j]
    y_train, y_test = tr[:, j], te[:, j]
    if categorical_target:
        y_train, y_test = y_train.astype(np.int64), y_test.astype(np.int64)
    predicted = _model(categorical_target, seed).fit(tr[:, keep], y_train).predict(te[:, keep])
    if categorical_target:
        with warnings.catch_warnings():
            # A predicted class absent from the test set scores nothing, as intended: no warning.
            warnings.filterwarnings("ignore", message="y_pred contains classes not in y_true")
            return float(balanced_accuracy_score(y_test, predicted))
    return float(r2_score(y_test, predicted))


def default_target_column(schema: Schema) -> str | None:
    """The last categorical used column (Adult: ``income``), else the last used column, else None.

    None when the table has fewer than two used columns (nothing to predict from).
    """
    used = schema.used
    if len(used) < 2:
        return None
    categorical = [c.name for c in used if c.role == CATEGORICAL]
    return categorical[-1] if categorical else used[-1].name


# -- a run's utility ---------------------------------------------------------------------------


def _check_samples(samples: Any) -> int:
    if isinstance(samples, bool) or not isinstance(samples, int) or not 2 <= samples <= MAX_SAMPLES:
        raise ParameterError(
            f"--samples must be a whole number from 2 to {MAX_SAMPLES} (the spread needs at least two "
            f"synthetic samples); got {samples!r}."
        )
    return samples


def utility_split(spec: RunSpec, n_rows: int, *, exclude: Any = ()) -> tuple[np.ndarray, np.ndarray]:
    """The rows of a run's table that utility is measured with: D, and the real test set.

    The test set is every record of the run's table that is not in D (the release set-up's
    holdout or population table, the paper set-up's D_aux and D_eval \\ D), or a random 10,000 of
    them (from ``stream(seed, 0, Role.UTILITY, 2)``, sorted) when there are more.

    Parameters
    ----------
    spec : RunSpec
        The run's spec.
    n_rows : int
        Rows of the run's table.
    exclude : array-like of int, optional
        Record ids that are neither in D nor test records (e.g. the records a remedy left out of
        D, so that every run of a family is scored on the same test set).

    Returns
    -------
    (ndarray, ndarray)
        Record ids of D and of the test set.
    """
    d = np.asarray(run_split(spec, n_rows).target)
    rest = np.setdiff1d(np.arange(n_rows), np.concatenate([d, np.asarray(exclude, dtype=np.int64)]))
    if len(rest) > MAX_TEST_ROWS:
        rest = np.sort(stream(spec.seed, 0, Role.UTILITY, 2).choice(rest, MAX_TEST_ROWS, replace=False))
    return d, rest


def measure_utility(
    folder: RunFolder, *, samples: int = DEFAULT_SAMPLES, target_column: str | None = None
) -> UtilityReport:
    """Measure a run's utility on fresh synthetic samples and store it in the run folder.

    The run's generator, with the run's parameters, is fitted on D and sampled (|D| rows)
    ``samples`` times; each sample is compared with D (fidelity, association) and trains the
    downstream model, which is scored on the holdout: the records of the run's table not in D (see
    :func:`utility_split`). The report is written to ``utility.json`` (replacing an earlier one).

    Parameters
    ----------
    folder : RunFolder
        The run (its spec and table; the audit need not be finished).
    samples : int
        Synthetic samples, 2 to 100; more narrow the spread's estimate.
    target_column : str, optional
        The column the downstream model predicts; :func:`default_target_column` when omitted.

    Raises
    ------
    ParameterError
        For a bad ``samples`` or a target column that is not a used column (naming the columns).
    RunError
        When the run's table no longer has the fingerprint its spec records.
    """
    samples = _check_samples(samples)
    spec = folder.spec()
    schema = Schema.from_dict(spec.schema)
    if target_column is not None:
        _target_index(schema, target_column)
    target = default_target_column(schema) if target_column is None else target_column
    table = folder.load_table()
    if fingerprint_table(table) != spec.data_fingerprint:
        raise RunError(
            f"The table of run {folder.run_id} no longer has the fingerprint its spec records, so its "
            "utility cannot be measured. Start a new run from the original data file."
        )
    X = encode(table, schema)
    # A leave-out remedy's left-out records are not test records: the family keeps one test set.
    d, test_rows = utility_split(spec, len(table), exclude=spec.left_out)
    real, holdout = X[d], X[test_rows]
    real_associations = association_matrix(real, schema)
    fidelity, association, downstream = [], [], []
    per_column: dict[str, list[float]] = {name: [] for name in schema.names}
    for i in range(samples):
        model = create(spec.generator, **spec.generator_params)
        synthetic = model.fit_sample(real, schema, len(d), rng=stream(spec.seed, 0, Role.UTILITY, 0, i))
        distances = total_variation(real, synthetic, schema)
        for name, value in distances.items():
            per_column[name].append(value)
        fidelity.append(float(np.mean(list(distances.values()))))
        association.append(_mean_gap(real_associations, association_matrix(synthetic, schema)))
        if target is not None and len(holdout):
            seed = sklearn_seed(stream(spec.seed, 0, Role.UTILITY, 1, i))
            downstream.append(downstream_score(synthetic, holdout, target, schema, seed))
    downstream_real = None
    if downstream:
        seed = sklearn_seed(stream(spec.seed, 0, Role.UTILITY, 3))
        downstream_real = downstream_score(real, holdout, str(target), schema, seed)
    categorical_target = target is not None and schema.column(target).role == CATEGORICAL
    report = UtilityReport(
        fidelity=spread(fidelity),
        association=spread(association),
        downstream=spread(downstream) if downstream else None,
        downstream_real=downstream_real,
        target_column=target if downstream else None,
        per_column={name: spread(values) for name, values in per_column.items()},
        samples=samples,
        downstream_metric=(BALANCED_ACCURACY if categorical_target else R2) if downstream else None,
    )
    folder.write_utility(report.to_dict())
    return report


def stored_utility(folder: RunFolder) -> UtilityReport | None:
    """The run's stored utility report, or None when it was never measured.

    Raises
    ------
    RunError
        When ``utility.json`` is damaged (the message says to measure it again).
    """
    data = folder.read_utility()
    if data is None:
        return None
    try:
        return UtilityReport.from_dict(data)
    except ValueError as error:
        raise RunError(
            f"utility.json of run {folder.run_id} does not hold utility figures ({error}); measure them "
            f"again: python -m privgame utility {folder.path}"
        ) from None


def family_target_column(folders: Sequence[RunFolder]) -> str | None:
    """The target column a family of runs is (or should be) compared on.

    The first stored report's target column, so that every run's downstream figure predicts the
    same column; else :func:`default_target_column` of the first run's schema.
    """
    for folder in folders:
        report = stored_utility(folder)
        if report is not None and report.target_column is not None:
            return report.target_column
    if not folders:
        return None
    return default_target_column(Schema.from_dict(folders[0].spec().schema))


def unmeasured(folders: Sequence[RunFolder], target_column: str | None) -> list[RunFolder]:
    """The runs among ``folders`` with no utility figures for ``target_column``.

    A run counts as measured when its stored report predicts ``target_column`` (or, for
    ``target_column=None``, when it has any report): the privacy–utility chart of a family
    compares downstream figures for one column only.
    """
    missing = []
    for folder in folders:
        report = stored_utility(folder)
        if report is None or (target_column is not None and report.target_column != target_column):
            missing.append(folder)
    return missing


def utility_lines(report: UtilityReport) -> list[str]:
    """The figures in plain words, one sentence each (what the CLI prints and the page shows)."""
    n = report.samples
    lines = [
        f"Fidelity: the columns' distributions differ from D's by {report.fidelity.text()} on average "
        f"(total variation distance; 0 = identical, 1 = nothing in common; mean ± sd over {n} "
        "synthetic samples).",
        f"Associations: pairs of columns differ in strength of association from D's by "
        f"{report.association.text()} on average (Cramér's V, correlation ratio, |Pearson's r|; "
        "0 = the same associations).",
    ]
    if report.downstream is not None and report.downstream_real is not None:
        lines.append(
            f"Downstream: a model predicting {report.target_column!r}, trained on synthetic data, scores "
            f"{report.downstream.text()} ({report.downstream_metric}) on the holdout; trained on D it "
            f"scores {report.downstream_real:.3f}."
        )
    else:
        lines.append("Downstream: not measured (no target column, or no holdout records).")
    worst = sorted(report.per_column.items(), key=lambda item: -item[1].mean)[:3]
    if worst:
        shown = ", ".join(f"{name} {s.mean:.3f}" for name, s in worst)
        lines.append(f"Columns furthest from D (total variation distance): {shown}.")
    return lines


def per_column_table(report: UtilityReport) -> pd.DataFrame:
    """Each column's total variation distance (mean and sd over samples), furthest from D first."""
    rows = [
        {"column": name, "total variation distance": s.mean, "sd over samples": s.sd}
        for name, s in report.per_column.items()
    ]
    table = pd.DataFrame(rows, columns=["column", "total variation distance", "sd over samples"])
    return table.sort_values("total variation distance", ascending=False, kind="stable").reset_index(
        drop=True
    )


def utility_row(report: UtilityReport | None) -> dict[str, Any]:
    """The report's headline figures as one flat row (for a table comparing runs).

    Keys: ``fidelity_tvd``, ``fidelity_tvd_sd``, ``association_diff``, ``association_diff_sd``,
    ``downstream``, ``downstream_sd``, ``downstream_real``, ``downstream_metric``,
    ``target_column`` and ``utility_samples``; every value is None when ``report`` is None (the
    run's utility was not measured).
    """
    keys = (
        "fidelity_tvd",
        "fidelity_tvd_sd",
        "association_diff",
        "association_diff_sd",
        "downstream",
        "downstream_sd",
        "downstream_real",
        "downstream_metric",
        "target_column",
        "utility_samples",
    )
    if report is None:
        return dict.fromkeys(keys)
    down = report.downstream
    values = (
        report.fidelity.mean,
        report.fidelity.sd,
        report.association.mean,
        report.association.sd,
        None if down is None else down.mean,
        None if down is None else down.sd,
        report.downstream_real,
        report.downstream_metric,
        report.target_column,
        report.samples,
    )
    return dict(zip(keys, values, strict=True))
