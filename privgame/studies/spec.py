"""A study's settings: :class:`StudySpec` and the values it varies (defaults:
:mod:`privgame.core.defaults`)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from privgame.core.defaults import EPSILON_GENERATORS, STUDIES
from privgame.core.errors import ParameterError
from privgame.settings.run_spec import RunSpec, TargetSelection

__all__ = ["StudyName", "StudySpec"]

StudyName = Literal["size", "epsilon", "datasets", "convergence"]

_STUDY_ID = re.compile(r"^[0-9]{8}-[0-9]{6}-(size|epsilon|datasets|convergence)-[0-9a-f]{6}$")
_ALL = TargetSelection(mode="all", k=None)


# --------------------------------------------------------------------------------------------
# The study specification
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StudySpec:
    """Everything that determines a study's results.

    Attributes
    ----------
    study : {"size", "epsilon", "datasets", "convergence"}
    base : RunSpec
        The settings every job starts from: data, split sizes, generator, attack, threshold and
        the root seed. Its ``targets`` are resolved to record ids by :func:`create_study`.
    sizes : tuple of int
        ``size``: the values of |D|.
    epsilons : tuple of float
        ``epsilon``: the budgets of PrivBayes or MST (``inf`` allowed: no noise).
    n_datasets : int
        ``datasets``: how many datasets D_k to draw around the record.
    n_evals : tuple of int
        ``convergence``: the values of N_eval (even, at least 4); jobs use the largest.
    repeats : int
        ``convergence``: full evaluations per record (at least 2).
    rho : float
        ``convergence``: failure probability of the Hoeffding bound drawn beside the spread.
    """

    study: StudyName
    base: RunSpec
    sizes: tuple[int, ...] = ()
    epsilons: tuple[float, ...] = ()
    n_datasets: int = 0
    n_evals: tuple[int, ...] = ()
    repeats: int = 0
    rho: float = 0.2

    @property
    def values(self) -> tuple[float, ...]:
        """The values the study varies, in job order."""
        if self.study == "size":
            return tuple(float(s) for s in self.sizes)
        if self.study == "epsilon":
            return tuple(self.epsilons)
        if self.study == "datasets":
            return tuple(float(k) for k in range(self.n_datasets))
        return tuple(float(n) for n in self.n_evals)

    @property
    def target_ids(self) -> tuple[int, ...]:
        """The resolved target records (empty until :func:`create_study` resolved them)."""
        return self.base.targets.ids if self.base.targets.mode == "ids" else ()

    def problems(self) -> list[str]:
        """Every problem with the study's own settings, one sentence each."""
        out: list[str] = []
        if self.study not in STUDIES:
            return [f"study {self.study!r} is unknown; use one of {list(STUDIES)}."]
        if self.study == "size":
            if not self.sizes:
                out.append("the size study needs at least one dataset size (--sizes).")
            bad = [s for s in self.sizes if isinstance(s, bool) or not isinstance(s, int) or s < 2]
            if bad:
                out.append(f"dataset sizes must be whole numbers of at least 2; these are not: {bad}.")
            if len(set(self.sizes)) != len(self.sizes):
                out.append("the dataset sizes contain duplicates; list each size once.")
        elif self.study == "epsilon":
            if self.base.generator not in EPSILON_GENERATORS:
                out.append(
                    "the epsilon study varies a differentially private generator's budget; its "
                    f"generator must be one of {list(EPSILON_GENERATORS)}, not {self.base.generator!r}."
                )
            if not self.epsilons:
                out.append("the epsilon study needs at least one epsilon (--epsilons).")
            bad_eps = [e for e in self.epsilons if not (isinstance(e, int | float) and e > 0)]
            if bad_eps:
                out.append(f"every epsilon must be a positive number or inf; these are not: {bad_eps}.")
            if len(set(self.epsilons)) != len(self.epsilons):
                out.append("the epsilons contain duplicates; list each value once.")
        elif self.study == "datasets":
            if not (isinstance(self.n_datasets, int) and 1 <= self.n_datasets <= 1000):
                out.append(f"the number of datasets must be between 1 and 1000; got {self.n_datasets!r}.")
            selection = self.base.targets
            if selection.mode == "ids" and len(selection.ids) != 1:
                out.append("the datasets study follows one record; give exactly one record id.")
            if selection.mode in ("random", "outliers") and selection.k != 1:
                out.append("the datasets study follows one record; choose k = 1.")
            if selection.mode == "all":
                out.append("the datasets study follows one record; choose it by id, at random or as outlier.")
        else:
            if not self.n_evals:
                out.append("the convergence study needs at least one N_eval (--n-evals).")
            bad_n = [
                n for n in self.n_evals if isinstance(n, bool) or not isinstance(n, int) or n < 4 or n % 2
            ]
            if bad_n:
                out.append(
                    f"every N_eval must be an even whole number of at least 4; these are not: {bad_n}."
                )
            if len(set(self.n_evals)) != len(self.n_evals):
                out.append("the N_eval values contain duplicates; list each once.")
            if self.n_evals and not bad_n and self.base.attack.n_eval != max(self.n_evals):
                out.append(
                    f"the base N_eval ({self.base.attack.n_eval}) must be the largest of --n-evals "
                    f"({max(self.n_evals)})."
                )
            if not (isinstance(self.repeats, int) and 2 <= self.repeats <= 1000):
                out.append(f"repeats must be between 2 and 1000 (a spread needs two); got {self.repeats!r}.")
            if not (isinstance(self.rho, int | float) and 0 < self.rho < 1):
                out.append(f"rho must lie strictly between 0 and 1; got {self.rho!r}.")
        return out

    def validate(self) -> StudySpec:
        """Check the study and its base run settings; raise one :class:`ParameterError`."""
        problems = self.problems()
        try:
            self.base.validate()
        except ParameterError as error:
            problems += error.problems
        if problems:
            raise ParameterError(f"The {self.study} study's settings are not valid.", problems)
        return self

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (infinite epsilon as the string "inf")."""
        return {
            "study": self.study,
            "base": self.base.to_dict(),
            "sizes": list(self.sizes),
            "epsilons": ["inf" if math.isinf(e) else e for e in self.epsilons],
            "n_datasets": self.n_datasets,
            "n_evals": list(self.n_evals),
            "repeats": self.repeats,
            "rho": self.rho,
        }

    def to_json(self) -> str:
        """Canonical JSON text."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StudySpec:
        """Rebuild a spec from :meth:`to_dict` output."""
        return cls(
            study=str(data["study"]),  # type: ignore[arg-type]
            base=RunSpec.from_dict(data["base"]),
            sizes=tuple(int(s) for s in data.get("sizes", ())),
            epsilons=tuple(float(e) for e in data.get("epsilons", ())),
            n_datasets=int(data.get("n_datasets", 0)),
            n_evals=tuple(int(n) for n in data.get("n_evals", ())),
            repeats=int(data.get("repeats", 0)),
            rho=float(data.get("rho", 0.2)),
        )

    def describe(self) -> str:
        """One line of the study's settings, for lists and captions."""
        b = self.base
        params = ", ".join(
            f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in b.generator_params.items()
        )
        gen = f"{b.generator}{f' ({params})' if params else ''}"
        varied = {
            "size": f"|D| in {list(self.sizes)}",
            "epsilon": f"epsilon in {[_epsilon_text(e) for e in self.epsilons]}",
            "datasets": f"{self.n_datasets} datasets, |D| = {b.sizes['target']:,}",
            "convergence": (
                f"N_eval in {_short_list(self.n_evals)}, {self.repeats} repeats, |D| = {b.sizes['target']:,}"
            ),
        }[self.study]
        n_eval = "" if self.study == "convergence" else f", N_eval {b.attack.n_eval}"
        return (
            f"{b.data_name} · {gen} · {varied} · {len(self.target_ids) or '?'} record(s) · "
            f"|D_aux| {b.sizes['aux']:,}, |D_eval| {b.sizes['eval']:,} · N_shadow {b.attack.n_shadow}"
            f"{n_eval} · seed {b.seed}"
        )


def _json_safe(value: Any) -> Any:
    """``value`` with infinite floats written as "inf"/"-inf" (PrivBayes' metadata holds epsilon)."""
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def _epsilon_text(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:g}"


def _short_list(values: Sequence[int]) -> str:
    if len(values) <= 6:
        return str(list(values))
    return f"[{values[0]}, {values[1]}, …, {values[-1]}] ({len(values)} values)"
