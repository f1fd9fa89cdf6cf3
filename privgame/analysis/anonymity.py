"""The three risks Europe's data protection authorities name, for the whole release, by anonymeter.

The Article 29 Working Party (Opinion 05/2014 on anonymisation techniques) judges anonymisation by
three risks: **singling out** (isolating one person's record), **linkability** (linking two
records of the same person) and **inference** (deducing a person's attribute). anonymeter (Giomi
et al., PETS 2023) measures each on a synthetic table as the attack's success on the records the
generator was trained on, corrected by its success on a *control* set of records it was not
(the run's holdout or population table): ``risk = (rate_train - rate_control) / (1 - rate_control)``,
with a confidence interval. These are figures for the whole table, not per record; the per-record
games (membership, attribute inference) are privgame's own.

anonymeter is used as it is, not rewritten. It is an optional dependency, installed without its
own pins (it declares ``numpy < 1.27``; its evaluators run unchanged on the numpy and pandas this
project pins, which ``tests/analysis/test_anonymity.py`` checks): ``pip install --no-deps -r
requirements-anonymeter.txt``.

Reproducibility: anonymeter draws its attacked records with pandas' and polars' unseeded sampling.
Every table handed to it here is drawn beforehand with privgame's seeds and sized so that
anonymeter's own draws are permutations of it (``n_attacks`` rows of D and of the control set,
singling out on tables of equal size), so the figures depend only on the run and the settings.
Two things stay outside privgame's seeds: anonymeter's *baseline* (a random-guess attack it reports
for comparison, not used in the risk, and not stored), and the *univariate* singling-out queries,
which anonymeter takes from polars' ``group_by`` in an order that varies from one process to the
next before its seeded shuffle: that one figure moves within its interval between two
measurements of the same run (0.229 and 0.242 on Adult; the multivariate singling out, the
linkability and the inference figures were equal to the last digit).

The release is the one the run audits (:func:`privgame.games.closeness.release_sample`).
"""

from __future__ import annotations

import contextlib
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from privgame.core.defaults import DEFAULT_ANONYMITY_ATTACKS
from privgame.core.errors import ParameterError, RunError
from privgame.core.seeding import Role, sklearn_seed, stream
from privgame.data import decode, encode, fingerprint_table
from privgame.data.schema import Schema
from privgame.games.closeness import release_sample
from privgame.games.plan import run_split
from privgame.store.folders import RunFolder

__all__ = [
    "ANONYMETER_INSTALL",
    "DEFAULT_ATTACKS",
    "AnonymityReport",
    "Risk",
    "anonymeter_available",
    "anonymity_lines",
    "measure_anonymity",
    "stored_anonymity",
]

DEFAULT_ATTACKS = DEFAULT_ANONYMITY_ATTACKS
MAX_SINGLING_OUT_ROWS = 10_000
"""Singling out is evaluated on at most this many records of D and of the control set (equal sizes)."""
ANONYMETER_INSTALL = "pip install --no-deps -r requirements-anonymeter.txt"
"""How to install anonymeter (the README's commands do)."""


def anonymeter_available() -> bool:
    """Whether anonymeter can be imported here."""
    try:
        import anonymeter.evaluators  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass(frozen=True)
class Risk:
    """One anonymeter risk: its value and 95% interval, in [0, 1], and the attack's success rates."""

    value: float
    low: float
    high: float
    attack_rate: float
    control_rate: float

    def to_dict(self) -> dict[str, float]:
        return {k: float(getattr(self, k)) for k in ("value", "low", "high", "attack_rate", "control_rate")}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Risk:
        return cls(**{k: float(data[k]) for k in ("value", "low", "high", "attack_rate", "control_rate")})

    def text(self) -> str:
        return f"{self.value:.3f} [{self.low:.3f}, {self.high:.3f}]"


@dataclass(frozen=True)
class AnonymityReport:
    """anonymeter's three risks for a run's release (``anonymity.json`` in the run folder).

    Attributes
    ----------
    singling_out : Risk
        Univariate singling out (predicates on one column, anonymeter's ``univariate`` mode).
    singling_out_multivariate : Risk
        Predicates combining ``n_cols`` columns.
    linkability : Risk
        Linking a record's two halves (``link_columns``) through the release's nearest rows.
    inference : dict of str to Risk
        Per secret column: inferring it from the others through the release's nearest row.
    n_attacks, control_rows, seconds, link_columns
        The settings and how long it took.
    """

    singling_out: Risk
    singling_out_multivariate: Risk
    linkability: Risk
    inference: dict[str, Risk]
    n_attacks: int
    control_rows: int
    seconds: float
    link_columns: tuple[tuple[str, ...], tuple[str, ...]]
    version: str = ""
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {
            "singling_out": self.singling_out.to_dict(),
            "singling_out_multivariate": self.singling_out_multivariate.to_dict(),
            "linkability": self.linkability.to_dict(),
            "inference": {k: v.to_dict() for k, v in self.inference.items()},
            "n_attacks": self.n_attacks,
            "control_rows": self.control_rows,
            "seconds": self.seconds,
            "link_columns": [list(self.link_columns[0]), list(self.link_columns[1])],
            "version": self.version,
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AnonymityReport:
        links = data.get("link_columns") or [[], []]
        return cls(
            singling_out=Risk.from_dict(data["singling_out"]),
            singling_out_multivariate=Risk.from_dict(data["singling_out_multivariate"]),
            linkability=Risk.from_dict(data["linkability"]),
            inference={k: Risk.from_dict(v) for k, v in dict(data.get("inference") or {}).items()},
            n_attacks=int(data["n_attacks"]),
            control_rows=int(data["control_rows"]),
            seconds=float(data["seconds"]),
            link_columns=(tuple(links[0]), tuple(links[1])),
            version=str(data.get("version", "")),
            notes=tuple(data.get("notes") or ()),
        )


_NO_BETTER = "as good or worse as baseline"


def _risk(evaluator: Any, name: str, notes: list[str]) -> Risk:
    """The evaluator's risk; where anonymeter finds the attack no better than its random-guess
    baseline (it warns that the figure "cannot be trusted"), a note says so."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        risk = evaluator.risk(confidence_level=0.95)
        results = evaluator.results(confidence_level=0.95)
    if any(_NO_BETTER in str(w.message) for w in caught):
        notes.append(
            f"{name}: the attack did no better than a random guess, so this figure shows that "
            "anonymeter's attack failed here, not that the risk is absent."
        )
    low, high = (float(v) for v in risk.ci)
    return Risk(
        value=float(risk.value),
        low=max(0.0, low),
        high=min(1.0, high),
        attack_rate=float(results.attack_rate.value),
        control_rate=float(results.control_rate.value) if results.control_rate is not None else float("nan"),
    )


def _rows(table: pd.DataFrame, n: int, rng: np.random.Generator) -> pd.DataFrame:
    """``n`` rows of ``table`` drawn without replacement by ``rng`` (all of them, shuffled, if fewer)."""
    take = rng.permutation(len(table))[: min(n, len(table))]
    return table.iloc[np.sort(take)].reset_index(drop=True)


def _link_columns(columns: Sequence[str]) -> tuple[list[str], list[str]]:
    """anonymeter's examples split the columns in two halves: what one source and another know."""
    half = (len(columns) + 1) // 2
    return list(columns[:half]), list(columns[half:])


def measure_anonymity(
    folder: RunFolder,
    *,
    n_attacks: int = DEFAULT_ATTACKS,
    secrets: Sequence[str] | None = None,
    workers: int = 1,
) -> AnonymityReport:
    """Measure anonymeter's three risks on the run's release and store them in the run folder.

    Parameters
    ----------
    folder : RunFolder
        The run (its spec and table; the audit need not be finished).
    n_attacks : int
        Records of D attacked by the linkability and inference evaluators, and the singling-out
        queries tried; at most the control set's size. More narrow the intervals.
    secrets : sequence of str, optional
        The columns the inference evaluator infers: the run's secret columns by default, else its
        last categorical column.
    workers : int
        Processes for anonymeter's nearest-neighbour searches.

    Raises
    ------
    ParameterError
        When anonymeter is not installed (with the command that installs it), ``n_attacks`` is
        not a whole number from 10 to 100,000, a secret is not a column the release holds, or the
        run has no records outside D to serve as the control set.
    RunError
        When the run's table no longer has the fingerprint its spec records.
    """
    if not anonymeter_available():
        raise ParameterError(
            f"Measuring the three risks needs the anonymeter package; install it with: {ANONYMETER_INSTALL}"
        )
    from importlib.metadata import version

    from anonymeter.evaluators import InferenceEvaluator, LinkabilityEvaluator, SinglingOutEvaluator

    if isinstance(n_attacks, bool) or not isinstance(n_attacks, int) or not 10 <= n_attacks <= 100_000:
        raise ParameterError(f"--attacks must be a whole number from 10 to 100,000; got {n_attacks!r}.")
    spec = folder.spec()
    schema = Schema.from_dict(spec.schema)
    chosen = list(secrets) if secrets else list(spec.inference.secrets) or _default_secret(schema)
    unknown = [s for s in chosen if s not in schema.names]
    if unknown:
        raise ParameterError(
            f"The secret columns {unknown} are not columns of the release; its columns are {schema.names}."
        )
    table = folder.load_table()
    if fingerprint_table(table) != spec.data_fingerprint:
        raise RunError(
            f"The table of run {folder.run_id} no longer has the fingerprint its spec records, so its "
            "risks cannot be measured. Start a new run from the original data file."
        )
    started = time.perf_counter()
    X = encode(table, schema)
    d = np.asarray(run_split(spec, len(table)).target)
    control_ids = np.setdiff1d(
        np.arange(len(table)), np.concatenate([d, np.asarray(spec.left_out, dtype=np.int64)])
    )
    if len(control_ids) < 10:
        raise ParameterError(
            f"Run {folder.run_id} has {len(control_ids)} records outside D: anonymeter needs a control set "
            "of records the generator was not trained on. Audit with a holdout or a population table."
        )
    ori = decode(X[d], schema)
    control = decode(X[control_ids], schema)
    syn = decode(release_sample(X, schema, spec, d), schema)
    attacks = min(n_attacks, len(control), len(ori))
    notes = (
        [f"{attacks:,} attacks (the control set holds {len(control):,} records)"]
        if attacks < n_attacks
        else []
    )

    def draw(frame: pd.DataFrame, n: int, index: int) -> pd.DataFrame:
        return _rows(frame, n, stream(spec.seed, 0, Role.SIMILARITY, 10, index))

    # Singling out: anonymeter keeps the unique rows of each table and corrects the control's
    # success by refitting on random subsets when the two differ in size; equal sizes avoid that.
    ori_unique, control_unique = ori.drop_duplicates(), control.drop_duplicates()
    size = min(len(ori_unique), len(control_unique), MAX_SINGLING_OUT_ROWS)
    so_ori, so_control = draw(ori_unique, size, 0), draw(control_unique, size, 1)
    link_ori, link_control = draw(ori, attacks, 2), draw(control, attacks, 3)
    columns = list(schema.names)
    link = _link_columns(columns)
    seed = sklearn_seed(stream(spec.seed, 0, Role.SIMILARITY, 11))
    with warnings.catch_warnings(), _quiet_numba():
        warnings.simplefilter("ignore")
        univariate = SinglingOutEvaluator(
            ori=so_ori, syn=syn, control=so_control, n_attacks=attacks, seed=seed
        ).evaluate(mode="univariate")
        multivariate = SinglingOutEvaluator(
            ori=so_ori, syn=syn, control=so_control, n_attacks=max(10, attacks // 5), n_cols=3, seed=seed
        ).evaluate(mode="multivariate")
        linkability = LinkabilityEvaluator(
            ori=link_ori, syn=syn, control=link_control, n_attacks=attacks, aux_cols=link, n_neighbors=10
        ).evaluate(n_jobs=workers)
        inference = {
            secret: _risk(
                InferenceEvaluator(
                    ori=link_ori,
                    syn=syn,
                    control=link_control,
                    aux_cols=[c for c in columns if c != secret],
                    secret=secret,
                    n_attacks=attacks,
                ).evaluate(n_jobs=workers),
                f"inference of {secret}",
                notes,
            )
            for secret in chosen
        }
        singling_out = _risk(univariate, "singling out", notes)
        singling_out_multivariate = _risk(multivariate, "singling out (three columns)", notes)
        linked = _risk(linkability, "linkability", notes)
    report = AnonymityReport(
        singling_out=singling_out,
        singling_out_multivariate=singling_out_multivariate,
        linkability=linked,
        inference=inference,
        n_attacks=attacks,
        control_rows=len(control),
        seconds=time.perf_counter() - started,
        link_columns=(tuple(link[0]), tuple(link[1])),
        version=version("anonymeter"),
        notes=tuple(notes),
    )
    folder.write_anonymity(report.to_dict())
    return report


@contextlib.contextmanager
def _quiet_numba() -> Any:
    """numba's compilation warnings are anonymeter's, not the user's."""
    import logging

    logger = logging.getLogger("numba")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _default_secret(schema: Schema) -> list[str]:
    categorical = [c.name for c in schema.used if c.role == "categorical" and c.distinct >= 2]
    return categorical[-1:] or schema.names[-1:]


def stored_anonymity(folder: RunFolder) -> AnonymityReport | None:
    """The run's stored three risks, or None when they were never measured (or are unreadable)."""
    data = folder.read_anonymity()
    if data is None:
        return None
    try:
        return AnonymityReport.from_dict(data)
    except (KeyError, TypeError, ValueError):
        return None


def anonymity_lines(report: AnonymityReport | Mapping[str, Any] | None) -> list[str]:
    """The three risks as sentences, for every face (empty when not measured)."""
    if report is None:
        return []
    if not isinstance(report, AnonymityReport):
        report = AnonymityReport.from_dict(report)
    lines = [
        f"singling out: {report.singling_out.text()} (one column at a time), "
        f"{report.singling_out_multivariate.text()} (three columns together)",
        f"linkability: {report.linkability.text()} (linking {', '.join(report.link_columns[0])} to "
        f"{', '.join(report.link_columns[1])})",
        *(f"inference of {secret}: {risk.text()}" for secret, risk in report.inference.items()),
    ]
    note = (
        f"anonymeter {report.version}: each risk is the attack's success on records of D beyond its "
        f"success on {report.control_rows:,} records outside D (0: no more than on strangers), "
        f"95% interval, {report.n_attacks:,} attacks; for the whole table, not per record; "
        f"{report.seconds:.0f} s."
    )
    return [*lines, note, *report.notes]
