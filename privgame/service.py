"""The one door from the two faces (the dashboard's pages and the command line) to the engine.

The pages import three modules of the package: this one, :mod:`privgame.figures` (charts) and
:mod:`privgame.errors`. Everything else they use (reading a table, the set-ups, a run's spec,
its plug-in check, its cost, launching and following it, its results at any t, remedies,
releases, studies and exports) is reached from here, so a page holds no engine logic of its own,
and what the page and the command line share is written once: the plug-in check
(:func:`check_plugin`), the summary at t (:func:`summary_at`), the options (:mod:`privgame.options`
and :mod:`privgame.study_options`).

Below the command line and above every module it gathers (see the layers in ``pyproject.toml``).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from privgame import metrics
from privgame.audit import (
    GROUP_LABELS,
    NOT_RUN,
    describe_setup,
    group_masks,
    not_played_reason,
    records_at,
    run_summary,
)
from privgame.background import (
    dismiss_extension,
    extension_state,
    launch,
    launch_extend,
    launch_remedy,
)
from privgame.compare import COMPARE_LABELS, compare_runs, paired_risks
from privgame.data import (
    BUNDLED_ADULT,
    DEFAULT_MAX_BYTES,
    Dataset,
    Domain,
    Inspection,
    Sizes,
    check_sizes,
    declare_domain,
    default_sizes,
    domain_template,
    encode,
    inspect_dataset,
    load_dataset,
    parse_domain,
)
from privgame.data.schema import CATEGORICAL, CONTINUOUS, ROLES, Column, Schema
from privgame.defaults import ATTACKERS, DEFAULT_ATTACKER
from privgame.duplicates import twin_note
from privgame.estimate import Calibration, calibrate, check_cost, cost_warning, estimate_seconds
from privgame.execution import default_workers, scheduler_address
from privgame.games import threat
from privgame.games.context import build_context, plan_summary
from privgame.games.engine import undecided_records
from privgame.games.plan import run_split
from privgame.games.preflight import create_run
from privgame.generators import (
    GENERATORS,
    ContractReport,
    check_contract,
    installed_plugins,
    offered,
    resolve,
)
from privgame.generators.plugins import CONTRACT_ROWS
from privgame.generators.synthpop import CATEGORICAL_SPLITS
from privgame.options import generator_params
from privgame.picking import parse_row_numbers, record_ids_for_rows, record_ids_for_values
from privgame.records import identifier_columns, value_columns, value_name
from privgame.release import card_path, make_release, not_safe_ids, verdict_text
from privgame.remedy import (
    GENERALISE_PARAMS,
    LEAVE_OUT,
    SAMPLE_CHOICES,
    Remedy,
    draws_sample,
    family,
    generalise_choices,
    kept_sample_ids,
    leave_out_ids,
)
from privgame.report import export_table, high_risk, html_report, record_profile, to_bytes
from privgame.setups import (
    DEFAULT_HOLDOUT,
    AuditInputs,
    load_population,
    paper_inputs,
    parse_holdout,
    release_inputs,
    with_setup,
)
from privgame.spec import AttackSettings, RunSpec, TargetSelection
from privgame.store import (
    DAMAGED,
    RunFolder,
    RunInfo,
    default_runs_root,
    json_bytes,
    list_runs,
    open_run,
    symlinked_entries,
)
from privgame.studies import (
    DEFAULT_DATASETS,
    DEFAULT_EPSILONS,
    DEFAULT_N_EVALS,
    DEFAULT_SIZES,
    STUDIES,
    STUDY_TITLES,
    StudyFolder,
    StudyInfo,
    create_study,
    launch_study,
    list_studies,
    open_study,
    study_results,
)
from privgame.study_figures import study_chart
from privgame.study_options import build_study_spec, study_arguments
from privgame.utility import (
    DEFAULT_SAMPLES,
    MAX_SAMPLES,
    UtilityReport,
    default_target_column,
    family_target_column,
    measure_utility,
    per_column_table,
    stored_utility,
    unmeasured,
    utility_lines,
)

__all__ = [  # noqa: RUF022 - grouped by what the faces do with them, sorted within each group
    # reading a table and its set-up
    "BUNDLED_ADULT",
    "CATEGORICAL",
    "CONTINUOUS",
    "DEFAULT_HOLDOUT",
    "DEFAULT_MAX_BYTES",
    "ROLES",
    "AuditInputs",
    "Column",
    "Dataset",
    "Domain",
    "Inspection",
    "Schema",
    "Sizes",
    "check_sizes",
    "declare_domain",
    "default_sizes",
    "domain_template",
    "encode",
    "inspect_dataset",
    "load_dataset",
    "load_population",
    "paper_inputs",
    "parse_domain",
    "parse_holdout",
    "release_inputs",
    "with_setup",
    # a run: its settings, its generator, its plan and cost, its launch
    "ATTACKERS",
    "CATEGORICAL_SPLITS",
    "DEFAULT_ATTACKER",
    "GENERATORS",
    "AttackSettings",
    "Calibration",
    "ContractReport",
    "RunSpec",
    "TargetSelection",
    "build_context",
    "calibrate",
    "check_cost",
    "check_plugin",
    "cost_warning",
    "create_run",
    "default_workers",
    "estimate_seconds",
    "generator_params",
    "installed_plugins",
    "launch",
    "offered",
    "parse_row_numbers",
    "plan_summary",
    "record_ids_for_rows",
    "record_ids_for_values",
    "resolve",
    "run_split",
    "scheduler_address",
    "threat",
    # the runs folder
    "DAMAGED",
    "RunFolder",
    "RunInfo",
    "default_runs_root",
    "json_bytes",
    "list_runs",
    "open_run",
    "symlinked_entries",
    # results at any t, records, extension
    "GROUP_LABELS",
    "NOT_RUN",
    "describe_setup",
    "dismiss_extension",
    "extension_state",
    "group_masks",
    "identifier_columns",
    "launch_extend",
    "not_played_reason",
    "records_at",
    "run_summary",
    "summary_at",
    "twin_note",
    "undecided_records",
    "value_columns",
    "value_name",
    # remedies, comparisons and utility
    "COMPARE_LABELS",
    "DEFAULT_SAMPLES",
    "GENERALISE_PARAMS",
    "LEAVE_OUT",
    "MAX_SAMPLES",
    "SAMPLE_CHOICES",
    "Remedy",
    "UtilityReport",
    "compare_runs",
    "default_target_column",
    "draws_sample",
    "family",
    "family_target_column",
    "generalise_choices",
    "kept_sample_ids",
    "launch_remedy",
    "leave_out_ids",
    "measure_utility",
    "paired_risks",
    "per_column_table",
    "stored_utility",
    "unmeasured",
    "utility_lines",
    # exports and the release
    "card_path",
    "export_table",
    "high_risk",
    "html_report",
    "make_release",
    "not_safe_ids",
    "record_profile",
    "to_bytes",
    "verdict_text",
    # the per-record maths (the verdict of one interval at t)
    "metrics",
    # studies
    "DEFAULT_DATASETS",
    "DEFAULT_EPSILONS",
    "DEFAULT_N_EVALS",
    "DEFAULT_SIZES",
    "STUDIES",
    "STUDY_TITLES",
    "StudyFolder",
    "StudyInfo",
    "build_study_spec",
    "create_study",
    "launch_study",
    "list_studies",
    "open_study",
    "study_arguments",
    "study_chart",
    "study_results",
]


def summary_at(folder: RunFolder, threshold: float | None = None) -> dict[str, Any]:
    """The run's summary recomputed at ``threshold`` (the run's own t when None), as the Results
    and Runs pages and ``python -m privgame report`` show it (see :func:`privgame.audit.run_summary`).

    Raises
    ------
    RunError
        When the run is not finished.
    ParameterError
        For a threshold outside [0, 1].
    """
    return run_summary(folder, threshold)


def check_plugin(spec: RunSpec, table: pd.DataFrame) -> ContractReport:
    """Check the run's plug-in generator against the generator protocol, the same way on both faces:
    on the first :data:`~privgame.generators.plugins.CONTRACT_ROWS` records of the run's D, with
    its parameters and its seed (see :func:`privgame.generators.check_contract`).

    Raises
    ------
    GeneratorContractError
        Naming everything the plug-in does that the engine cannot rely on.
    """
    schema = Schema.from_dict(spec.schema)
    rows = run_split(spec, len(table)).target[:CONTRACT_ROWS]
    X = encode(table.iloc[rows], schema)
    return check_contract(spec.generator, X, schema, params=spec.generator_params, seed=spec.seed)
