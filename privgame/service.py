"""The one door from the two faces (the dashboard's pages and the command line) to the engine.

The pages import three modules of the package: this one, :mod:`privgame.outputs.figures` (charts) and
:mod:`privgame.core.errors`. Everything else they use (reading a table, the set-ups, a run's spec,
its plug-in check, its cost, launching and following it, its results at any t, remedies,
releases, studies and exports) is reached from here, so a page holds no engine logic of its own,
and what the page and the command line share is written once: the plug-in check
(:func:`check_plugin`), the checks before a run is written (:func:`check_launch`, for the command
line and the Python API), the tables they export (:func:`export_frame`), the options
(:mod:`privgame.core.options`, declared once as data, and
:mod:`privgame.settings.generator_options`).

Below the command line and above every module it gathers (see the layers in ``pyproject.toml``).
Each name is imported from its module when first used, so importing the service costs nothing
and a command pays only for what it uses.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from privgame.data import Inspection
    from privgame.games.estimate import Calibration, CostCheck
    from privgame.generators import ContractReport
    from privgame.settings.run_spec import RunSpec
    from privgame.store.folders import RunFolder

# Each function below imports, from one module, the names the faces use from it, and returns them.
# The imports are written out (not read from a table through importlib) so that the import
# contracts and the import graph see every module the service reaches; they run when a name is
# first used (PEP 562), so that a command that needs the store alone does not load the engine,
# scikit-learn and plotly.


def _from_core() -> dict[str, Any]:
    from privgame.core import metrics

    return locals()


def _from_games_audit() -> dict[str, Any]:
    from privgame.games.audit import (
        GROUP_LABELS,
        NOT_RUN,
        OUT_WORLD_TEXT,
        describe_setup,
        group_masks,
        not_played_reason,
        record_similarity_text,
        records_at,
        run_summary,
        threshold_guide,
    )

    return locals()


def _from_runs_background() -> dict[str, Any]:
    from privgame.runs.background import (
        RemedyLaunch,
        dismiss_extension,
        extension_state,
        forget_remedy_launch,
        launch,
        launch_extend,
        launch_once,
        launch_remedy,
        remedy_launches,
        resume_stopped,
        start_remedy_launch,
    )

    return locals()


def _from_analysis_compare() -> dict[str, Any]:
    from privgame.analysis.compare import COMPARE_LABELS, compare_runs, paired_risks

    return locals()


def _from_core_csvsafe() -> dict[str, Any]:
    from privgame.core.csvsafe import csv_safe

    return locals()


def _from_games_game() -> dict[str, Any]:
    from privgame.games.game import GAMES, MODEL_SEEDED, TRADITIONAL, Game, played

    return locals()


def _from_core_numbers() -> dict[str, Any]:
    from privgame.core.numbers import number_text

    return locals()


def _from_analysis_planner() -> dict[str, Any]:
    from privgame.analysis.planner import Plan, PlanStep, for_n_shadow, plan_for_budget, plan_rows

    return locals()


def _from_analysis_file_check() -> dict[str, Any]:
    from privgame.analysis.file_check import FileCheck, check_file, file_check_lines

    return locals()


def _from_data() -> dict[str, Any]:
    from privgame.data import (
        BUNDLED_ADULT,
        DEFAULT_MAX_BYTES,
        Dataset,
        Domain,
        Inspection,
        Sizes,
        check_sizes,
        declare_domain,
        decode,
        default_sizes,
        domain_template,
        encode,
        inspect_dataset,
        load_dataset,
        parse_domain,
    )

    return locals()


def _from_data_schema() -> dict[str, Any]:
    from privgame.data.schema import CATEGORICAL, CONTINUOUS, ROLES, Column, Schema

    return locals()


def _from_core_defaults() -> dict[str, Any]:
    from privgame.core.defaults import (
        ATTACKERS,
        DEFAULT_ANONYMITY_ATTACKS,
        DEFAULT_ATTACKER,
        DEFAULT_INFERENCE_THRESHOLD,
    )

    return locals()


def _from_settings_attacks() -> dict[str, Any]:
    from privgame.settings.attacks import attack_words, resolve_attacks

    return locals()


def _from_data_duplicates() -> dict[str, Any]:
    from privgame.data.duplicates import drop_duplicate_rows, repeated_rows, twin_note

    return locals()


def _from_games_estimate() -> dict[str, Any]:
    from privgame.games.estimate import (
        Calibration,
        breakdown,
        calibrate,
        calibrate_once,
        check_cost,
        cost_warning,
        estimate_seconds,
        load_note,
    )

    return locals()


def _from_settings_executors() -> dict[str, Any]:
    from privgame.settings.executors import default_workers, resolve_workers, scheduler_address

    return locals()


def _from_games() -> dict[str, Any]:
    from privgame.games import threat

    return locals()


def _from_games_context() -> dict[str, Any]:
    from privgame.games.context import build_context, plan_summary

    return locals()


def _from_games_ladder() -> dict[str, Any]:
    from privgame.games.ladder import rungs

    return locals()


def _from_games_engine() -> dict[str, Any]:
    from privgame.games.engine import execute, extend, finish_extension, undecided_records

    return locals()


def _from_games_plan() -> dict[str, Any]:
    from privgame.games.plan import run_split

    return locals()


def _from_games_preflight() -> dict[str, Any]:
    from privgame.games.preflight import create_run

    return locals()


def _from_games_request() -> dict[str, Any]:
    from privgame.games.request import AuditRequest, PreparedRequest, members_of, prepare_request

    return locals()


def _from_games_threat() -> dict[str, Any]:
    from privgame.games.threat import default_games

    return locals()


def _from_generators() -> dict[str, Any]:
    from privgame.generators import (
        GENERATORS,
        ContractReport,
        available,
        check_contract,
        create,
        installed_plugins,
        offered,
        resolve,
    )

    return locals()


def _from_generators_plugins() -> dict[str, Any]:
    from privgame.generators.plugins import CONTRACT_ROWS

    return locals()


def _from_generators_mst() -> dict[str, Any]:
    from privgame.generators.mst import risk_cap

    return locals()


def _from_settings_generator_options() -> dict[str, Any]:
    from privgame.settings.generator_options import apply_domain, given_generator_params

    return locals()


def _from_outputs_files() -> dict[str, Any]:
    from privgame.outputs.files import check_output_path, write_output

    return locals()


def _from_settings_picking() -> dict[str, Any]:
    from privgame.settings.picking import parse_row_numbers, record_ids_for_rows, record_ids_for_values

    return locals()


def _from_core_records() -> dict[str, Any]:
    from privgame.core.records import identifier_columns, identifiers_first, value_columns, value_name

    return locals()


def _from_outputs_release() -> dict[str, Any]:
    from privgame.outputs.release import (
        card_path,
        check_output_paths,
        columns_not_released_text,
        make_release,
        not_safe_ids,
        verdict_text,
        write_release,
    )

    return locals()


def _from_runs_remedy() -> dict[str, Any]:
    from privgame.runs.remedy import (
        GENERALISE_PARAMS,
        LEAVE_OUT,
        SAMPLE_CHOICES,
        Remedy,
        RemedyEstimate,
        create_remedy,
        draws_sample,
        estimate_remedy,
        family,
        find_remedy,
        generalise_choices,
        kept_sample_ids,
        leave_out_ids,
        parse_bin,
        parse_generalise,
        parse_merge_rare,
        plan_remedy,
        private_note,
        remedy_runs,
        stopped_remedies,
    )

    return locals()


def _from_outputs_run_report() -> dict[str, Any]:
    from privgame.outputs.run_report import export_table, high_risk, html_report, record_profile, to_bytes

    return locals()


def _from_core_seeding() -> dict[str, Any]:
    from privgame.core.seeding import Role, stream

    return locals()


def _from_settings_setups() -> dict[str, Any]:
    from privgame.settings.setups import (
        DEFAULT_HOLDOUT,
        AuditInputs,
        load_population,
        paper_inputs,
        parse_holdout,
        release_inputs,
    )

    return locals()


def _from_games_screen() -> dict[str, Any]:
    from privgame.games.screen import statistic_words

    return locals()


def _from_games_inference() -> dict[str, Any]:
    from privgame.games.inference import (
        inference_columns,
        inference_texts,
        record_inference_texts,
        sensitive_columns,
    )

    return locals()


def _from_attack_inference() -> dict[str, Any]:
    from privgame.attack.inference import secret_problems

    return locals()


def _from_outputs_screen_tables() -> dict[str, Any]:
    from privgame.outputs.screen_tables import SCREEN_EXPORT_COLUMNS, high_risk_with_screen, screen_table

    return locals()


def _from_settings_run_spec() -> dict[str, Any]:
    from privgame.settings.run_spec import (
        MAX_N_EVAL,
        AttackSettings,
        InferenceSettings,
        RunSpec,
        ScreenSettings,
        TargetSelection,
        parse_ids,
    )

    return locals()


def _from_store_folders() -> dict[str, Any]:
    from privgame.store.folders import (
        DAMAGED,
        RunFolder,
        RunInfo,
        default_runs_root,
        json_bytes,
        list_runs,
        open_run,
        symlinked_entries,
        write_error,
    )

    return locals()


def _from_studies() -> dict[str, Any]:
    from privgame.studies import (
        DEFAULT_DATASETS,
        DEFAULT_EPSILONS,
        DEFAULT_N_EVALS,
        DEFAULT_SIZES,
        EPSILON_GENERATORS,
        STUDIES,
        STUDY_TITLES,
        StudyFolder,
        StudyInfo,
        create_study,
        execute_study,
        launch_study,
        launch_study_once,
        list_studies,
        open_study,
        study_cost,
        study_results,
    )

    return locals()


def _from_outputs_study_figures() -> dict[str, Any]:
    from privgame.outputs.study_figures import study_chart

    return locals()


def _from_studies_request() -> dict[str, Any]:
    from privgame.studies.request import (
        STUDY_N_SHADOW,
        STUDY_TARGETS,
        VARIED,
        StudyRequest,
        prepare_study,
        read_varied,
        study_command,
    )

    return locals()


def _from_core_options() -> dict[str, Any]:
    from privgame.core.options import (
        ATTACKER,
        CLASSIFIER,
        CONFIRM_TOP,
        INFERENCE_THRESHOLD,
        N_EVAL,
        N_SHADOW,
        SCREEN,
        SCREEN_OPTIONS,
        SCREEN_SHADOWS,
        SEED,
        THRESHOLD,
        Option,
        generator_options,
    )

    return locals()


def _from_analysis_anonymity() -> dict[str, Any]:
    from privgame.analysis.anonymity import (
        ANONYMETER_INSTALL,
        AnonymityReport,
        anonymeter_available,
        anonymity_lines,
        measure_anonymity,
        stored_anonymity,
    )

    return locals()


def _from_analysis_utility() -> dict[str, Any]:
    from privgame.analysis.utility import (
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

    return locals()


_LOADERS: tuple[Callable[[], dict[str, Any]], ...] = (
    _from_core,
    _from_games_audit,
    _from_runs_background,
    _from_analysis_compare,
    _from_core_csvsafe,
    _from_games_game,
    _from_core_numbers,
    _from_analysis_planner,
    _from_analysis_file_check,
    _from_data,
    _from_data_schema,
    _from_core_defaults,
    _from_settings_attacks,
    _from_data_duplicates,
    _from_games_estimate,
    _from_settings_executors,
    _from_games,
    _from_games_context,
    _from_games_ladder,
    _from_games_engine,
    _from_games_plan,
    _from_games_preflight,
    _from_games_request,
    _from_games_threat,
    _from_generators,
    _from_generators_plugins,
    _from_generators_mst,
    _from_settings_generator_options,
    _from_outputs_files,
    _from_settings_picking,
    _from_core_records,
    _from_outputs_release,
    _from_runs_remedy,
    _from_outputs_run_report,
    _from_core_seeding,
    _from_settings_setups,
    _from_games_screen,
    _from_games_inference,
    _from_attack_inference,
    _from_outputs_screen_tables,
    _from_settings_run_spec,
    _from_store_folders,
    _from_studies,
    _from_outputs_study_figures,
    _from_studies_request,
    _from_core_options,
    _from_analysis_anonymity,
    _from_analysis_utility,
)
_LOADER_OF = {name: loader for loader in _LOADERS for name in loader.__code__.co_varnames}
"""Which loader gives each name: its local names are exactly the names it imports."""

__all__ = sorted(
    [
        *_LOADER_OF,
        "LaunchCheck",
        "check_launch",
        "check_plugin",
        "duplicate_rows",
        "export_frame",
        "record_names",
    ]
)


def __getattr__(name: str) -> Any:
    """The name ``name`` as its module holds it now (the module is imported on first use).

    Not kept here: each use imports it again (a dictionary lookup once the module is loaded), so
    the service never holds on to an object its module has since replaced.
    """
    loader = _LOADER_OF.get(name)
    if loader is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return loader()[name]


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


@dataclass(frozen=True)
class LaunchCheck:
    """What the checks before a run's folder is written found (:func:`check_launch`).

    Attributes
    ----------
    plugin : ContractReport or None
        A plug-in generator's check against the protocol (None for a built-in generator).
    calibration : Calibration or None
        A plug-in's timing on this machine, which the cost was estimated from (None for a built-in
        generator, whose cost check times it itself).
    cost : CostCheck
        The run's estimated cost against the limit.
    """

    plugin: ContractReport | None
    calibration: Calibration | None
    cost: CostCheck

    @property
    def estimate(self) -> float | None:
        """The estimated wall-clock seconds, which the engine shows as time left (None when the
        generator could not be timed)."""
        return self.cost.wall_seconds if math.isfinite(self.cost.wall_seconds) else None


def check_launch(
    spec: RunSpec, table: pd.DataFrame, *, workers: int, scheduler: bool = False, allow_large: bool = False
) -> LaunchCheck:
    """The checks before a run folder is written, the same for ``privgame run`` and
    :func:`privgame.audit`: a plug-in generator is checked against the generator protocol
    (:func:`check_plugin`) and timed on this machine, then the run's cost is estimated and refused
    over the limit unless ``allow_large`` (:func:`privgame.games.estimate.check_cost`).

    Parameters
    ----------
    workers : int
        The local worker processes the run will use.
    scheduler : bool, default False
        Whether it runs on a Dask cluster (a plug-in is then timed in one process).

    Raises
    ------
    GeneratorContractError
        For a plug-in that breaks the protocol.
    ParameterError
        For a run over the cost limit without ``allow_large``.
    """
    from privgame.games.estimate import calibrate, check_cost
    from privgame.generators import available

    plugin = calibration = None
    if spec.generator not in available():
        plugin = check_plugin(spec, table)
        calibration = calibrate(spec, table, workers=1 if scheduler else workers)
    cost = check_cost(
        spec, table, workers=workers, calibration=calibration, allow_large=allow_large, scheduler=scheduler
    )
    return LaunchCheck(plugin=plugin, calibration=calibration, cost=cost)
