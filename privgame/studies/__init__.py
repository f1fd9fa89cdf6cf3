"""The paper's studies: sets of runs that vary one setting, each giving a table and a figure.

======================  =======================================================================
study                   what varies (the paper's figure)
======================  =======================================================================
``size``                |D|: the same target records in nested datasets of growing size (Fig. 3)
``epsilon``             PrivBayes' (Fig. 4) or MST's privacy budget epsilon, same D and records
``datasets``            the dataset D_k around one record x: its model-seeded risk in K datasets
                        drawn as in the traditional game, beside its traditional risk (Fig. 5)
``convergence``         the seeds: repeated full evaluations of the same records in the same D,
                        the spread of both risks for growing N_eval beside the Hoeffding bound
                        (Fig. 6, Appendix C)
======================  =======================================================================

A study is one folder under ``<runs root>/studies/`` holding its settings and one run folder per
*job* (one setting of the varied quantity)::

    study.json      the frozen StudySpec (the base RunSpec, the values, the resolved targets)
    data.parquet    the prepared table
    status.json     state, progress, error (checked against a schema when read)
    cancel          present when a cancel was requested
    engine.lock     locked (flock) by the process running the study, while it runs
    checksums.sha256  the SHA-256 of study.json, data.parquet and the outputs below
    runs/<key>/     one run folder per job (the layout of privgame.store.folders), e.g. 00-size-200
    table.csv       the study's table, once every job is done
    points.csv      the numbers behind the figure (one row per record, dataset or repeat)
    figure.html     the figure, plotly.js inlined (when a renderer is given)

As in a run folder (see :mod:`privgame.store.folders`), every file the study reads must match its line in
``checksums.sha256`` (a missing line means damaged), and so must the job folders' ``spec.json``
and ``data.parquet``; one process at a time runs a study, which it holds by a lock that dies with it.

Every job is played with the engine's own units (:func:`privgame.games.work.shared_chunk` and
:func:`privgame.games.work.evaluate_target`), checkpointed in its run folder, so an interrupted
study resumes where it stopped and ends with the same numbers. A ``size`` or ``epsilon`` job is
exactly the run ``python -m privgame run`` makes with the job's ``spec.json``.

The package is layered: :mod:`~privgame.studies.spec` (the settings), :mod:`~privgame.studies.jobs`
(one run per value, and what each study varies), :mod:`~privgame.studies.folder`,
:mod:`~privgame.studies.results` and :mod:`~privgame.studies.execution`. It imports neither plotly
nor :mod:`privgame.outputs.study_figures`, which sits above it: ``figure.html`` is written by the renderer
the caller passes to :func:`execute_study` (the command line passes
:func:`privgame.outputs.study_figures.figure_html`), so a study runs where plotly is not installed.

Seeds. A study has one root seed. The split of the table into D_aux and D_eval is always the
one of the root seed, and so are the target records, resolved once when the study is created and
written to ``study.json``. Beyond that:

* ``size``: every job uses the root seed. The split is one permutation and D is its first |D|
  rows of D_eval, so the datasets are nested and the targets (drawn from the smallest D) belong to
  every one of them.
* ``epsilon``: every job uses the root seed (same D, same records, same shadow datasets); only
  epsilon changes.
* ``datasets``: D_k is x plus |D| - 1 rows of D_eval \\ {x} drawn from
  ``stream(seed, 0, Role.STUDY, k)`` (the traditional game's 'in' dataset); its references are
  D_eval \\ D_k. Every other choice uses the root seed, so the attack and the traditional game
  are the same in every job and only the model-seeded game changes with D_k.
* ``convergence``: repeat ``r`` keeps D and the targets and plays the full pipeline (shadow
  datasets, attack, both games) with the seed ``stream(seed, 0, Role.STUDY, r)`` draws. Each repeat
  is evaluated once with the largest N_eval; a smaller N_eval uses the first N_eval/2 'in' and
  first N_eval/2 'out' runs, which are themselves an evaluation with N_eval runs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from privgame.core.defaults import (
    DEFAULT_DATASETS,
    DEFAULT_EPSILONS,
    DEFAULT_N_EVALS,
    DEFAULT_SIZES,
    EPSILON_GENERATORS,
    STUDIES,
    STUDY_TITLES,
)

# The names below load their module when first used, so that ``privgame.studies.request`` (what
# the command line's parser asks for) can be imported without numpy and pandas: ``--help`` stays light.
_LAZY = {
    "execute_study": "execution",
    **dict.fromkeys(
        [
            "StudyFolder",
            "StudyInfo",
            "StudyResult",
            "create_study",
            "launch_study",
            "launch_study_once",
            "list_studies",
            "open_study",
            "studies_dir",
        ],
        "folder",
    ),
    **dict.fromkeys(["Job", "plan_jobs", "study_cost"], "jobs"),
    **dict.fromkeys(["estimation_noise", "study_results", "write_outputs"], "results"),
    "StudySpec": "spec",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)


if TYPE_CHECKING:
    from privgame.studies.execution import execute_study
    from privgame.studies.folder import (
        StudyFolder,
        StudyInfo,
        StudyResult,
        create_study,
        launch_study,
        launch_study_once,
        list_studies,
        open_study,
        studies_dir,
    )
    from privgame.studies.jobs import Job, plan_jobs, study_cost
    from privgame.studies.results import estimation_noise, study_results, write_outputs
    from privgame.studies.spec import StudySpec

__all__ = [
    "DEFAULT_DATASETS",
    "DEFAULT_EPSILONS",
    "DEFAULT_N_EVALS",
    "DEFAULT_SIZES",
    "EPSILON_GENERATORS",
    "STUDIES",
    "STUDY_TITLES",
    "Job",
    "StudyFolder",
    "StudyInfo",
    "StudyResult",
    "StudySpec",
    "create_study",
    "estimation_noise",
    "execute_study",
    "launch_study",
    "launch_study_once",
    "list_studies",
    "open_study",
    "plan_jobs",
    "studies_dir",
    "study_cost",
    "study_results",
    "write_outputs",
]
