"""Which rows each dataset of each game is trained on (Algorithm 1 of the paper), and what a
plan costs.

Every function here is pure: given the split and a random generator, it returns the record ids
(rows of the prepared table) of one training dataset. Roles and their datasets, for target x,
dataset size n = |D|:

==============  ==========================================================  ============
role            training rows                                               shared?
==============  ==========================================================  ============
shadow 'in'     n - 1 random rows of D_aux, plus x                          per target
shadow 'out'    n random rows of D_aux                                      every target
MS 'in'         D itself                                                    every target
MS 'out'        D with x replaced by a reference record ~ Unif(D_eval \\ D)  per target
T 'in'          n - 1 random rows of D_eval \\ {x}, plus x                  per target
T 'out'         n random rows of D_eval \\ {x}                              per target
==============  ==========================================================  ============

Random rows are drawn without replacement. The attacker's shadow datasets come only from D_aux,
which is disjoint from D_eval (and so from D). In the release set-up D_aux (a holdout or a
population table) can hold fewer rows than D: shadow datasets are then drawn *with* replacement
by default, or made smaller (``shadow_size``) and drawn without; the synthetic datasets the attack
sees keep |D| rows either way.

:func:`run_split` gives a run's split, in either set-up.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from privgame.data.splits import Sizes, Split, check_sizes, release_split, split_indices
from privgame.settings.run_spec import RunSpec

__all__ = [
    "FitCount",
    "count_fits",
    "ms_in_rows",
    "ms_out_rows",
    "run_split",
    "shadow_in_rows",
    "shadow_out_rows",
    "t_in_rows",
    "t_out_rows",
    "without_records",
]


def run_split(spec: RunSpec, n_rows: int) -> Split:
    """The run's D_aux, D_eval, D and reference records, in its set-up (a pure function).

    Parameters
    ----------
    spec : RunSpec
    n_rows : int
        Rows of the run's (prepared) table.
    """
    setup = spec.setup
    if setup.kind != "release":
        # A leave-out remedy's sizes count D without its left-out records; the split is its parent's.
        gone = len(spec.left_out)
        sizes = Sizes(
            **{**spec.sizes, "target": spec.sizes["target"] + gone, "eval": spec.sizes["eval"] + gone}
        )
        check_sizes(n_rows, sizes)
        split = split_indices(n_rows, sizes, spec.seed)
    else:
        split = release_split(
            setup.data_rows,
            setup.population_rows,
            aux=spec.sizes["aux"],
            seed=spec.seed,
            separate_population=setup.population == "table",
        )
    return without_records(split, spec.left_out)


def without_records(split: Split, left_out: Sequence[int]) -> Split:
    """``split`` with the records ``left_out`` taken out of D and D_eval (a leave-out remedy).

    D_aux and the reference records are unchanged, so every record id keeps its role and every
    stream that depends only on them (shadow datasets, trained attacks) is the parent run's.
    """
    if len(left_out) == 0:
        return split
    gone = np.asarray(sorted(int(i) for i in left_out), dtype=np.int64)

    def keep(ids: np.ndarray) -> np.ndarray:
        out = ids[~np.isin(ids, gone)]
        out.flags.writeable = False
        return out

    return Split(aux=split.aux, eval=keep(split.eval), target=keep(split.target), reference=split.reference)


def shadow_in_rows(
    rng: np.random.Generator, aux: np.ndarray, record_id: int, n: int, *, replace: bool = False
) -> np.ndarray:
    """n - 1 random auxiliary rows plus the target record."""
    return np.append(rng.choice(aux, size=n - 1, replace=replace), record_id)


def shadow_out_rows(
    rng: np.random.Generator, aux: np.ndarray, n: int, *, replace: bool = False
) -> np.ndarray:
    """n random auxiliary rows (the target is never in D_aux)."""
    return rng.choice(aux, size=n, replace=replace)


def ms_in_rows(target: np.ndarray) -> np.ndarray:
    """The model-seeded game's 'in' dataset: D itself."""
    return np.asarray(target)


def ms_out_rows(
    rng: np.random.Generator, target: np.ndarray, reference: np.ndarray, record_id: int
) -> tuple[np.ndarray, int]:
    """D with the target replaced, in place, by a reference record drawn from D_eval \\ D.

    Returns the rows and the reference record's id.
    """
    ref = int(reference[rng.integers(0, len(reference))])
    rows = np.array(target, copy=True)
    rows[rows == record_id] = ref
    return rows, ref


def _pool_without(pool: np.ndarray, record_id: int) -> np.ndarray:
    return pool[pool != record_id]


def t_in_rows(rng: np.random.Generator, eval_pool: np.ndarray, record_id: int, n: int) -> np.ndarray:
    """The traditional game's 'in' dataset: n - 1 rows of D_eval \\ {x}, plus x."""
    return np.append(rng.choice(_pool_without(eval_pool, record_id), size=n - 1, replace=False), record_id)


def t_out_rows(rng: np.random.Generator, eval_pool: np.ndarray, record_id: int, n: int) -> np.ndarray:
    """The traditional game's 'out' dataset: n rows of D_eval \\ {x}."""
    return rng.choice(_pool_without(eval_pool, record_id), size=n, replace=False)


@dataclass(frozen=True)
class FitCount:
    """How many generator fits and samples a plan needs.

    Attributes
    ----------
    shared_fits, shared_samples : int
        Fits and samples of the datasets every target shares.
    fits_per_target : int
        Fits of each target's own unit.
    n_targets : int
    pool_fits : int or None
        Pool datasets trained in the pooled traditional game (None: the per-target game).
    extra_fits : int
        Per-target draws, in all, of targets the pool left short (pooled game only).
    exact : bool
        False when ``pool_fits`` is an estimate made without the audited records.
    """

    shared_fits: int
    shared_samples: int
    fits_per_target: int
    n_targets: int
    pool_fits: int | None = None
    extra_fits: int = 0
    exact: bool = True

    @property
    def total_fits(self) -> int:
        """Every generator fit of the run."""
        return (
            self.shared_fits + (self.pool_fits or 0) + self.extra_fits + self.fits_per_target * self.n_targets
        )

    def describe(self) -> str:
        """One sentence for the CLI and the dashboard."""
        about = "" if self.exact else "about "
        if self.pool_fits is None:
            return (
                f"{self.total_fits:,} generator fits: {self.shared_fits:,} shared by every target "
                f"(shared shadow datasets and the model-seeded 'in' models) and {self.fits_per_target:,} "
                f"for each of the {self.n_targets:,} target records."
            )
        extra = (
            f", plus {self.extra_fits:,} traditional datasets drawn for targets the pool left short"
            if self.extra_fits
            else ""
        )
        return (
            f"{about}{self.total_fits:,} generator fits: {self.shared_fits:,} shared by every target "
            f"(shared shadow datasets and the model-seeded 'in' models), {about}{self.pool_fits:,} for "
            f"the traditional game's pool of datasets (shared by the targets that use them) and "
            f"{self.fits_per_target:,} for each of the {self.n_targets:,} target records{extra}."
        )


def count_fits(
    n_targets: int,
    n_shadow: int,
    n_eval: int,
    *,
    deterministic_fit: bool,
    pool_fits: int | None = None,
    extra_fits: int = 0,
    exact: bool = True,
    traditional: bool = True,
    shadows_on_d: bool = False,
) -> FitCount:
    """Count the generator fits of a plan.

    Shared: N_shadow/2 shared shadow fits, and the N_eval/2 model-seeded 'in' models on D (a single
    fit when the generator's fit is deterministic, sampled N_eval/2 times). Per target:
    N_shadow/2 of the target's own shadow datasets, N_eval/2 model-seeded 'out', and N_eval
    traditional fits, or, in the pooled traditional game (``pool_fits`` given, see
    :mod:`privgame.games.pool`), ``pool_fits`` pool datasets for all targets together plus
    ``extra_fits`` per-target draws; none when the traditional game is not played
    (``traditional`` False). With ``shadows_on_d`` (the leave-one-out attacker, see
    :mod:`privgame.games.threat`) the shared shadow datasets are the generator on D too, so a
    deterministic fit makes them all with the model-seeded 'in' models' single fit.
    """
    half_shadow, half_eval = n_shadow // 2, n_eval // 2
    if not traditional:
        pool_fits, extra_fits = None, 0
    per_target_traditional = 2 * half_eval if traditional and pool_fits is None else 0
    on_d = 1 if deterministic_fit else half_eval  # the model-seeded 'in' models
    # With shadows on D and a deterministic fit, the single fit on D serves the shadows too.
    shared = 1 if shadows_on_d and deterministic_fit else half_shadow + on_d
    return FitCount(
        shared_fits=shared,
        shared_samples=half_shadow + half_eval,
        fits_per_target=half_shadow + half_eval + per_target_traditional,
        n_targets=n_targets,
        pool_fits=pool_fits,
        extra_fits=extra_fits if pool_fits is not None else 0,
        exact=exact,
    )
