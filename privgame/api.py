"""The Python API: one call audits a table and returns an :class:`Audit`, whose methods read,
report, release, remedy and extend it.

>>> import privgame
>>> audit = privgame.audit("data/adult.csv.gz", "synthpop", outliers=5, random=5)  # doctest: +SKIP
>>> audit.verdict()                                                               # doctest: +SKIP
>>> audit.records().head()                                                        # doctest: +SKIP
>>> audit.release("release.csv")                                                  # doctest: +SKIP

It is a third face beside the command line and the dashboard, with no engine of its own: a request
is prepared by :func:`privgame.games.request.prepare_request`, as ``privgame run`` prepares it,
and run, read and released by the service the two other faces use; the run folder it writes is the
one they read (``privgame report RUN_DIR`` or the dashboard's Results page open it too).
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from privgame.core.options import CLASSIFIER, N_EVAL, N_SHADOW, SEED, THRESHOLD

if TYPE_CHECKING:
    import pandas as pd

    from privgame.games.engine import Progress
    from privgame.settings.run_spec import RunSpec
    from privgame.store.folders import RunFolder

__all__ = ["Audit", "audit", "open_audit"]


def audit(
    data: str | os.PathLike[str] | bytes | pd.DataFrame,
    generator: str = "synthpop",
    *,
    population: str | os.PathLike[str] | bytes | pd.DataFrame | None = None,
    holdout: float | int | None = None,
    setup: Literal["release", "paper"] = "release",
    attacker: str | None = None,
    attacks: str | Sequence[str] | None = None,
    outliers: int | None = None,
    random: int | None = None,
    target_ids: Sequence[int] | None = None,
    n_shadow: int = N_SHADOW.default,
    n_eval: int = N_EVAL.default,
    classifier: Literal["random_forest", "logistic"] = CLASSIFIER.default,
    threshold: float = THRESHOLD.default,
    screen: Literal["all", "none"] | None = None,
    screen_shadows: int | None = None,
    confirm_top: int | None = None,
    secrets: str | Sequence[str] = (),
    inference_threshold: float | None = None,
    seed: int = SEED.default,
    missing: Literal["drop", "category"] = "drop",
    workers: int | None = None,
    scheduler: str | None = None,
    runs: str | os.PathLike[str] | None = None,
    progress: bool | Callable[[Progress], None] = True,
    allow_large: bool = False,
    **generator_params: Any,
) -> Audit:
    """Audit the records of ``data`` against the synthetic releases ``generator`` would make.

    The same audit as ``privgame run`` with the same settings: the release set-up by default (D is
    the whole of ``data``; a ``population`` table, or a seeded ``holdout`` of ``data``, plays the
    population), the leave-one-out attacker, the audit plan of ``outliers`` + ``random`` records
    (20 + 20) played exactly, every record screened.

    Parameters
    ----------
    data : path, bytes or DataFrame
        The table behind the release.
    generator : str
        ``synthpop``, ``baynet``, ``privbayes``, ``mst``, ``marginals``, a plug-in ``module:Class`` or an
        installed plug-in's name; its parameters as keywords (``epsilon=1.0``, ``degree=2``,
        ``min_samples_leaf=5``...).
    population, holdout, setup, attacker, attacks, outliers, random, target_ids, n_shadow, n_eval,
    classifier, threshold, screen, screen_shadows, confirm_top, seed, missing
        As the ``run`` flags of the same names (``privgame run --help``), with the same declared
        defaults (:mod:`privgame.core.options`); None takes the set-up's default.
    secrets, inference_threshold
        The secret columns of the per-record attribute-inference game (``--secret``, one name or
        several; none by default) and its threshold (``--inference-threshold``).
    workers : int, optional
        Local worker processes (every core by default); ``scheduler`` runs on a Dask cluster.
    runs : path, optional
        The folder that holds run folders ($PRIVGAME_RUNS, else ``runs/``).
    progress : bool or callable
        A progress bar (tqdm: in a notebook, a widget where ipywidgets is installed); False for
        none, or a callable that receives each :class:`~privgame.games.engine.Progress`.
    allow_large : bool
        Run even when the estimated cost is over the limit (30 days of CPU time on this machine),
        as ``--i-know-its-large``; without it such an audit is refused before any work.

    Returns
    -------
    Audit
        The finished audit (interrupt it with Ctrl-C, or the notebook's stop button, and
        :meth:`Audit.resume` finishes it).

    Raises
    ------
    PrivgameError
        A :class:`~privgame.core.errors.ParameterError`, ``DataError``, ``SchemaError`` or
        ``SizeError`` naming what is wrong and the fix, before any work.
    """
    from privgame.service import (
        AuditRequest,
        check_launch,
        create_run,
        default_runs_root,
        prepare_request,
        resolve_workers,
        scheduler_address,
    )

    data_source, data_name = _source(data, "data")
    population_source, population_name = (
        (None, None) if population is None else _source(population, "population")
    )
    request = AuditRequest(
        data=data_source,
        data_name=data_name,
        missing=missing,
        generator=generator,
        generator_params=generator_params,
        setup=setup,
        population=population_source,
        population_name=population_name,
        holdout=holdout,
        outliers=outliers,
        random=random,
        target_ids=target_ids,
        n_shadow=n_shadow,
        n_eval=n_eval,
        classifier=classifier,
        attacker=attacker,
        attacks=attacks,
        screen=screen,
        screen_shadows=screen_shadows,
        confirm_top=confirm_top,
        secrets=(secrets,) if isinstance(secrets, str) else tuple(secrets),
        inference_threshold=inference_threshold,
        threshold=threshold,
        seed=seed,
    )
    prepared = prepare_request(request)
    spec, table = prepared.spec, prepared.inputs.table
    scheduler = scheduler_address(scheduler)  # $PRIVGAME_SCHEDULER as on the command line
    workers = resolve_workers(workers)
    # A plug-in is checked against the generator protocol and timed, then the cost, as `privgame run` does.
    on_dask = scheduler is not None
    launch = check_launch(spec, table, workers=workers, scheduler=on_dask, allow_large=allow_large)
    folder = create_run(default_runs_root() if runs is None else runs, spec, table)
    result = Audit(folder)
    estimate = launch.estimate
    result.resume(workers=workers, scheduler=scheduler, progress=progress, estimate=estimate)
    return result


def open_audit(run_dir: str | os.PathLike[str]) -> Audit:
    """The :class:`Audit` of a stored run folder (one the command line or the dashboard made too).

    Raises
    ------
    RunError
        When ``run_dir`` is not a run folder, naming the path.
    """
    from privgame.service import RunFolder

    return Audit(RunFolder(run_dir))


class Audit:
    """A run folder, read and acted on: the result of :func:`audit` and :func:`open_audit`.

    Every method reads the folder as the command line's ``report``, ``export``, ``release``,
    ``remedy`` and ``extend`` do; ``threshold`` defaults to the run's own t.

    Attributes
    ----------
    folder : RunFolder
        The run folder.
    """

    def __init__(self, folder: RunFolder) -> None:
        self.folder = folder

    @property
    def path(self) -> Path:
        """The run folder's path."""
        return Path(self.folder.path)

    @property
    def spec(self) -> RunSpec:
        """The run's settings."""
        return self.folder.spec()

    @property
    def state(self) -> str:
        """``created``, ``running``, ``cancelled``, ``failed`` or ``done``; ``failed`` also for a run
        whose process ended before it finished without recording why (killed, or ended by the
        generator's own code): see :meth:`privgame.store.folders.RunFolder.current_status`."""
        return str(self.folder.current_status().get("state", "created"))

    def summary(self, threshold: float | None = None) -> dict[str, Any]:
        """The run's summary at ``threshold`` (``privgame report --json``): the verdict sentence
        (``["answer"]["text"]``), the counts, the share of D at risk, the screen and its agreement."""
        from privgame.service import run_summary

        self._require_done()
        return run_summary(self.folder, threshold)

    def verdict(self, threshold: float | None = None) -> str:
        """The answer in one paragraph: how many records are at risk, and what to do."""
        return str(self.summary(threshold)["answer"]["text"])

    def share(self, threshold: float | None = None) -> dict[str, Any]:
        """The share of all of D at risk: its interval (``low``, ``high``), how it was estimated
        (``method``) and its sentence (``text``)."""
        return dict(self.summary(threshold)["share_at_risk"])

    def records(self, threshold: float | None = None) -> pd.DataFrame:
        """The audited records' results with their verdicts at ``threshold``, one row each."""
        from privgame.service import records_at

        self._require_done()
        return records_at(self.folder.records(), self._threshold(threshold))

    def screen(self, threshold: float | None = None) -> pd.DataFrame:
        """Every record of D as the screen judged it (``privgame export --what screen``); empty
        when the run did not screen."""
        import pandas as pd

        from privgame.service import SCREEN_EXPORT_COLUMNS, screen_table

        self._require_done()
        if not self.folder.has_screen():
            return pd.DataFrame(columns=list(SCREEN_EXPORT_COLUMNS))
        return screen_table(self.folder, self._threshold(threshold))

    def high_risk(self, threshold: float | None = None, *, screened: bool = False) -> pd.DataFrame:
        """The records at risk, riskiest first (``privgame export --what high-risk``); with
        ``screened`` also every record of D the screen puts at risk."""
        from privgame.service import high_risk, high_risk_with_screen

        self._require_done()
        t = self._threshold(threshold)
        if screened and self.folder.has_screen():
            return high_risk_with_screen(self.folder, t)
        return high_risk(self.folder.records(), t)

    def report(self, path: str | os.PathLike[str], threshold: float | None = None) -> Path:
        """Write the self-contained HTML report (``privgame export --what html``) and return its path."""
        from privgame.service import html_report, write_output

        self._require_done()
        html = html_report(self.folder, self._threshold(threshold))
        return write_output(path, html.encode("utf-8"), what="the HTML report")

    def release(
        self,
        path: str | os.PathLike[str],
        *,
        rows: int | None = None,
        seed: int | None = None,
        threshold: float | None = None,
        accept_risk: bool = False,
    ) -> Path:
        """Train the audited generator on exactly the audited D and write the synthetic release and
        its card (``<path>.card.json``), as ``privgame release``; refused while records are at risk
        unless ``accept_risk``. Returns the table's path."""
        from privgame.service import check_output_paths, make_release, write_release

        self._require_done()
        check_output_paths(path, inputs=[self.path], audited_name=self.spec.data_name)
        made = make_release(self.folder, rows=rows, seed=seed, threshold=threshold, accept_risk=accept_risk)
        table, _ = write_release(made, path)
        return Path(table)

    def remedy(
        self,
        *,
        leave_out: Literal["at-risk", "at-risk-and-undecided"] | None = None,
        generalise: tuple[str, float] | None = None,
        merge_rare: Mapping[str, int] | None = None,
        bins: Mapping[str, int] | None = None,
        screened: bool = False,
        private: float | None = None,
        threshold: float | None = None,
        workers: int | None = None,
        progress: bool | Callable[[Progress], None] = True,
    ) -> Audit:
        """Apply remedies and re-audit (``privgame remedy``): leave records out, generalise the
        generator (``("min-leaf", 20)``, ``("epsilon", 1.0)``), train the release with MST at
        ``private`` = epsilon (differential privacy), merge rare categories or bin columns. A
        remedy made before is finished or read, not made twice. Returns the re-audit."""
        from privgame.service import Remedy, create_remedy, find_remedy, plan_remedy

        self._require_done()
        remedy = Remedy(
            leave_out=leave_out,
            threshold=threshold,
            generalise=generalise,
            merge_rare=tuple((merge_rare or {}).items()),
            bins=tuple((bins or {}).items()),
            screened=screened,
            private=private,
        )
        planned = plan_remedy(self.folder, remedy)
        made = find_remedy(self.folder, planned[0])
        if made is None:
            made, _ = create_remedy(self.folder, remedy, planned=planned)
        child = Audit(made)
        if not made.is_done():
            child.resume(workers=workers, progress=progress)
        return child

    def extend(
        self,
        n_eval: int,
        *,
        record_ids: Sequence[int] | None = None,
        threshold: float | None = None,
        workers: int | None = None,
        progress: bool | Callable[[Progress], None] = True,
    ) -> Audit:
        """Add evaluation runs, up to ``n_eval`` per game (rounded to the nearest doubling of the
        records' runs, :mod:`privgame.games.ladder`), to the records undecided at ``threshold``
        (or to ``record_ids``), as ``privgame extend``: every run made is reused, so the runs are
        those of a run started at that many. Returns this audit."""
        from privgame.service import extend

        self._require_done()
        extend(
            self.folder,
            n_eval,
            record_ids=None if record_ids is None else [int(r) for r in record_ids],
            threshold=threshold,
            workers=workers,
            progress=_progress(progress),
        )
        return self

    def resume(
        self,
        *,
        workers: int | None = None,
        scheduler: str | None = None,
        progress: bool | Callable[[Progress], None] = True,
        estimate: float | None = None,
    ) -> Audit:
        """Run the audit to its end, or finish one that was interrupted (``privgame resume``)."""
        from privgame.service import execute

        bar = _progress(progress)
        try:
            execute(self.folder, workers=workers, scheduler=scheduler, progress=bar, estimate=estimate)
        except KeyboardInterrupt:
            # The Audit object may be lost with the interrupted call: say where the run is.
            print(
                f"interrupted; the audit is kept in {self.path}: privgame.open({str(self.path)!r}).resume() "
                "finishes it",
                file=sys.stderr,
            )
            raise
        finally:
            close = getattr(bar, "close", None)
            if close is not None:
                close()
        return self

    def __repr__(self) -> str:
        return f"Audit({str(self.path)!r}, state={self.state!r})"

    def _repr_html_(self) -> str:
        from html import escape

        if self.state != "done":
            return f"<p><b>privgame audit</b> {escape(str(self.path))}: {escape(self.state)}</p>"
        return f"<p><b>privgame audit</b> {escape(str(self.path))}</p><p>{escape(self.verdict())}</p>"

    def _threshold(self, threshold: float | None) -> float:
        from privgame.core.parameters import check_threshold

        return check_threshold(self.spec.threshold if threshold is None else threshold)

    def _require_done(self) -> None:
        from privgame.core.errors import RunError

        state = self.state
        if state != "done":
            raise RunError(f"The audit in {self.path} is {state}, not finished; call .resume() to finish it.")


def _source(value: Any, what: str) -> tuple[str | os.PathLike[str] | bytes, str | None]:
    """A table argument as the loaders take it: a path or bytes as given, a DataFrame as Parquet
    bytes (so that it is read, checked and typed exactly as an uploaded file is)."""
    import pandas as pd

    if isinstance(value, pd.DataFrame):
        buffer = io.BytesIO()
        value.to_parquet(buffer, index=False)
        return buffer.getvalue(), f"{what}.parquet"
    if isinstance(value, str | os.PathLike | bytes):
        return value, None
    from privgame.core.errors import ParameterError

    raise ParameterError(
        f"{what} must be a path, a file's bytes or a pandas DataFrame; got {type(value).__name__}."
    )


class _Bar:
    """tqdm over the engine's progress: one bar for the screen's datasets, one for the exact game's
    units (its phases ``shared``, ``targets`` and ``results`` share one count)."""

    def __init__(self) -> None:
        self.part = ""
        self.bar: Any = None

    def __call__(self, p: Progress) -> None:
        from tqdm.auto import tqdm

        part = "screen" if p.phase == "screen" else "audit"
        if part != self.part:
            self.close()
            self.part = part
            what = "screen (datasets)" if part == "screen" else "exact game (units)"
            self.bar = tqdm(total=p.total, desc=what, file=sys.stderr, leave=True)
        self.bar.total = p.total
        self.bar.n = p.done
        self.bar.refresh()
        if p.phase == "done":
            self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _progress(progress: bool | Callable[[Progress], None]) -> Callable[[Progress], None] | None:
    if progress is True:
        return _Bar()
    if progress is False or progress is None:
        return None
    return progress
