"""The one door from the two faces (the dashboard's pages and the command line) to the engine.

The pages import three modules of the package: this one, :mod:`privgame.outputs.figures` (charts) and
:mod:`privgame.core.errors`. Everything else they use (reading a table, the set-ups, a run's spec,
its plug-in check, its cost, launching and following it, its results at any t, remedies,
releases, studies and exports) is reached from here, so a page holds no engine logic of its own,
and what the page and the command line share is written once: the plug-in check
(:func:`check_plugin`), the tables they export (:func:`export_frame`), the options
(:mod:`privgame.core.options`, declared once as data, and
:mod:`privgame.settings.generator_options`).

Below the command line and above every module it gathers (see the layers in ``pyproject.toml``).
Each name is imported from its module when first used, so importing the service costs nothing
and a command pays only for what it uses.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from privgame.data import Inspection
    from privgame.generators import ContractReport
    from privgame.settings.run_spec import RunSpec
    from privgame.store.folders import RunFolder

_EXPORTS: dict[str, tuple[str, ...]] = {
    "privgame.core": ("metrics",),
    "privgame.games.audit": (
        "GROUP_LABELS",
        "NOT_RUN",
        "OUT_WORLD_TEXT",
        "describe_setup",
        "group_masks",
        "not_played_reason",
        "record_similarity_text",
        "records_at",
        "run_summary",
        "threshold_guide",
    ),
    "privgame.runs.background": (
        "dismiss_extension",
        "extension_state",
        "launch",
        "launch_extend",
        "launch_once",
        "launch_remedy",
        "RemedyLaunch",
        "forget_remedy_launch",
        "remedy_launches",
        "resume_stopped",
        "start_remedy_launch",
    ),
    "privgame.analysis.compare": (
        "COMPARE_LABELS",
        "compare_runs",
        "paired_risks",
    ),
    "privgame.core.csvsafe": ("csv_safe",),
    "privgame.games.game": ("GAMES", "MODEL_SEEDED", "TRADITIONAL", "Game", "played"),
    "privgame.core.numbers": ("number_text",),
    "privgame.analysis.planner": (
        "Plan",
        "PlanStep",
        "for_n_shadow",
        "plan_for_budget",
        "plan_rows",
    ),
    "privgame.analysis.file_check": (
        "FileCheck",
        "check_file",
        "file_check_lines",
    ),
    "privgame.data": (
        "BUNDLED_ADULT",
        "DEFAULT_MAX_BYTES",
        "Dataset",
        "Domain",
        "Inspection",
        "Sizes",
        "check_sizes",
        "declare_domain",
        "default_sizes",
        "domain_template",
        "encode",
        "inspect_dataset",
        "load_dataset",
        "parse_domain",
        "decode",
    ),
    "privgame.data.schema": (
        "CATEGORICAL",
        "CONTINUOUS",
        "ROLES",
        "Column",
        "Schema",
    ),
    "privgame.core.defaults": (
        "ATTACKERS",
        "DEFAULT_ATTACKER",
        "DEFAULT_INFERENCE_THRESHOLD",
        "DEFAULT_ANONYMITY_ATTACKS",
    ),
    "privgame.settings.attacks": (
        "attack_words",
        "resolve_attacks",
    ),
    "privgame.data.duplicates": (
        "twin_note",
        "drop_duplicate_rows",
        "repeated_rows",
    ),
    "privgame.games.estimate": (
        "Calibration",
        "breakdown",
        "calibrate",
        "check_cost",
        "cost_warning",
        "estimate_seconds",
        "load_note",
    ),
    "privgame.settings.executors": (
        "default_workers",
        "scheduler_address",
        "resolve_workers",
    ),
    "privgame.games": ("threat",),
    "privgame.games.context": (
        "build_context",
        "plan_summary",
    ),
    "privgame.games.ladder": ("rungs",),
    "privgame.games.engine": (
        "undecided_records",
        "extend",
        "execute",
        "finish_extension",
    ),
    "privgame.games.plan": ("run_split",),
    "privgame.games.preflight": ("create_run",),
    "privgame.games.request": ("AuditRequest", "PreparedRequest", "members_of", "prepare_request"),
    "privgame.games.threat": ("default_games",),
    "privgame.generators": (
        "GENERATORS",
        "ContractReport",
        "check_contract",
        "installed_plugins",
        "offered",
        "resolve",
        "available",
        "create",
    ),
    "privgame.generators.plugins": ("CONTRACT_ROWS",),
    "privgame.generators.mst": ("risk_cap",),
    "privgame.settings.generator_options": ("apply_domain", "given_generator_params"),
    "privgame.outputs.files": (
        "check_output_path",
        "write_output",
    ),
    "privgame.settings.picking": (
        "parse_row_numbers",
        "record_ids_for_rows",
        "record_ids_for_values",
    ),
    "privgame.core.records": (
        "identifier_columns",
        "value_columns",
        "value_name",
        "identifiers_first",
    ),
    "privgame.outputs.release": (
        "card_path",
        "make_release",
        "not_safe_ids",
        "verdict_text",
        "check_output_paths",
        "write_release",
        "columns_not_released_text",
    ),
    "privgame.runs.remedy": (
        "GENERALISE_PARAMS",
        "LEAVE_OUT",
        "SAMPLE_CHOICES",
        "Remedy",
        "draws_sample",
        "family",
        "generalise_choices",
        "kept_sample_ids",
        "leave_out_ids",
        "parse_bin",
        "parse_generalise",
        "parse_merge_rare",
        "create_remedy",
        "find_remedy",
        "plan_remedy",
        "private_note",
        "RemedyEstimate",
        "estimate_remedy",
        "remedy_runs",
        "stopped_remedies",
    ),
    "privgame.outputs.run_report": (
        "export_table",
        "high_risk",
        "html_report",
        "record_profile",
        "to_bytes",
    ),
    "privgame.core.seeding": (
        "Role",
        "stream",
    ),
    "privgame.settings.setups": (
        "DEFAULT_HOLDOUT",
        "AuditInputs",
        "load_population",
        "paper_inputs",
        "parse_holdout",
        "release_inputs",
    ),
    "privgame.games.screen": ("statistic_words",),
    "privgame.games.inference": (
        "inference_columns",
        "inference_texts",
        "record_inference_texts",
        "sensitive_columns",
    ),
    "privgame.attack.inference": ("secret_problems",),
    "privgame.outputs.screen_tables": (
        "SCREEN_EXPORT_COLUMNS",
        "high_risk_with_screen",
        "screen_table",
    ),
    "privgame.settings.run_spec": (
        "AttackSettings",
        "InferenceSettings",
        "RunSpec",
        "ScreenSettings",
        "TargetSelection",
        "MAX_N_EVAL",
        "parse_ids",
    ),
    "privgame.store.folders": (
        "DAMAGED",
        "RunFolder",
        "RunInfo",
        "default_runs_root",
        "json_bytes",
        "list_runs",
        "open_run",
        "symlinked_entries",
        "write_error",
    ),
    "privgame.studies": (
        "DEFAULT_DATASETS",
        "DEFAULT_EPSILONS",
        "EPSILON_GENERATORS",
        "DEFAULT_N_EVALS",
        "DEFAULT_SIZES",
        "STUDIES",
        "STUDY_TITLES",
        "StudyFolder",
        "StudyInfo",
        "create_study",
        "launch_study",
        "launch_study_once",
        "list_studies",
        "open_study",
        "study_results",
        "execute_study",
        "study_cost",
    ),
    "privgame.outputs.study_figures": ("study_chart",),
    "privgame.studies.request": (
        "STUDY_N_SHADOW",
        "STUDY_TARGETS",
        "VARIED",
        "StudyRequest",
        "prepare_study",
        "read_varied",
        "study_command",
    ),
    "privgame.core.options": (
        "ATTACKER",
        "CLASSIFIER",
        "N_EVAL",
        "N_SHADOW",
        "SEED",
        "THRESHOLD",
        "Option",
        "generator_options",
    ),
    "privgame.analysis.anonymity": (
        "ANONYMETER_INSTALL",
        "AnonymityReport",
        "anonymeter_available",
        "anonymity_lines",
        "measure_anonymity",
        "stored_anonymity",
    ),
    "privgame.analysis.utility": (
        "DEFAULT_SAMPLES",
        "MAX_SAMPLES",
        "UtilityReport",
        "default_target_column",
        "family_target_column",
        "measure_utility",
        "per_column_table",
        "stored_utility",
        "unmeasured",
        "utility_lines",
    ),
}
"""Where each name the faces use lives: imported on first use (PEP 562), so that a command
that needs the store alone does not load the engine, scikit-learn and plotly."""

_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted([*_MODULE_OF, "check_plugin", "duplicate_rows", "export_frame", "record_names"])


def __getattr__(name: str) -> Any:
    """The name ``name`` as its module holds it now (the module is imported on first use).

    Not kept here: each use reads the module again (a dictionary lookup), so the service never
    holds on to an object its module has since replaced.
    """
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    found = importlib.import_module(module)
    return getattr(found, name) if hasattr(found, name) else importlib.import_module(f"{module}.{name}")


def __dir__() -> list[str]:
    return list(__all__)


def export_frame(folder: RunFolder, what: str, threshold: float, *, screened: bool = False) -> pd.DataFrame:
    """The table ``python -m privgame export`` and the Export page write for ``what``
    (``"records"``, ``"high-risk"`` or ``"screen"``) at ``threshold``:
    :func:`privgame.outputs.run_report.export_table`'s columns (the screen's:
    :func:`privgame.outputs.screen_tables.screen_table`) with who each record is (its identifier
    columns) first, the same order on both faces. ``screened`` adds to the high-risk list the
    records the screen puts at risk that the exact game did not play
    (:func:`privgame.outputs.screen_tables.high_risk_with_screen`).
    """
    from privgame.core.records import identifiers_first
    from privgame.outputs.run_report import export_table
    from privgame.outputs.screen_tables import high_risk_with_screen, screen_table

    schema = folder.spec().schema
    if what == "screen":
        return identifiers_first(screen_table(folder, threshold), schema)
    if screened and what == "high-risk":
        return identifiers_first(high_risk_with_screen(folder, threshold), schema)
    return identifiers_first(export_table(folder.records(), what, threshold), schema)


def duplicate_rows(found: Inspection) -> int | None:
    """Rows of an inspected table, as prepared, that repeat an earlier row on the used columns
    (None for a table with problems): ``schema`` prints it and the Data page shows it, because a
    record with an exact twin is less unique than a membership attack assumes."""
    from privgame.core.errors import PrivgameError
    from privgame.data.duplicates import repeated_rows

    if found.problems:
        return None
    try:
        return int(repeated_rows(found.prepared.table, found.prepared.schema).sum())
    except PrivgameError:
        return None


def record_names(folder: RunFolder, record_ids: list[int]) -> list[str]:
    """How the data owner knows each record: its identifier columns' values (a person id, a
    name, the columns the generator excluded as identifiers) with its record id, or the record id
    alone when the table has no identifier column."""
    from privgame.core.records import identifier_columns, value_name

    records = folder.records().set_index("record_id")
    columns = identifier_columns(records.columns, folder.spec().schema)
    names = []
    for record_id in record_ids:
        if columns and record_id in records.index:
            who = ", ".join(f"{value_name(c)} {records.at[record_id, c]}" for c in columns)
            names.append(f"{who} (record {record_id})")
        else:
            names.append(f"record {record_id}")
    return names


def check_plugin(spec: RunSpec, table: pd.DataFrame) -> ContractReport:
    """Check the run's plug-in generator against the generator protocol, the same way on both faces:
    on the first :data:`~privgame.generators.plugins.CONTRACT_ROWS` records of the run's D, with
    its parameters and its seed (see :func:`privgame.generators.check_contract`).

    Raises
    ------
    GeneratorContractError
        Naming everything the plug-in does that the engine cannot rely on.
    """
    from privgame.data import encode
    from privgame.data.schema import Schema
    from privgame.games.plan import run_split
    from privgame.generators import check_contract
    from privgame.generators.plugins import CONTRACT_ROWS

    schema = Schema.from_dict(spec.schema)
    rows = run_split(spec, len(table)).target[:CONTRACT_ROWS]
    X = encode(table.iloc[rows], schema)
    return check_contract(spec.generator, X, schema, params=spec.generator_params, seed=spec.seed)
