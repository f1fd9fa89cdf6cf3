"""Remedies: leave-out runs linked to their parent, exact reuse, paired re-audits, compare, errors."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from builders import at_once

import privgame.runs.remedy as remedy_module
from privgame.analysis.compare import NOT_MEASURED, NOT_RUN, compare_runs, paired_risks
from privgame.cli.main import main
from privgame.core.errors import ParameterError
from privgame.data import BUNDLED_ADULT, load_dataset
from privgame.games.audit import group_masks, share_at_risk
from privgame.games.engine import execute, start_run
from privgame.games.plan import run_split
from privgame.outputs.release import make_release
from privgame.runs.remedy import (
    Remedy,
    create_remedy,
    draws_sample,
    family,
    find_remedy,
    kept_sample_ids,
    parse_bin,
    parse_generalise,
    parse_merge_rare,
    plan_remedy,
)
from privgame.settings.run_spec import AttackSettings, RunSpec, TargetSelection
from privgame.settings.setups import release_inputs
from privgame.store.folders import RunFolder

# t low enough that several records of a tiny run are at risk or undecided.
T = 0.6


@pytest.fixture(scope="module")
def parent(tmp_path_factory: pytest.TempPathFactory) -> RunFolder:
    root = tmp_path_factory.mktemp("remedy")
    adult = pd.read_csv(BUNDLED_ADULT, nrows=400).dropna().drop_duplicates()
    adult = adult[["age", "workclass", "education", "race", "gender", "hours-per-week", "income"]]
    adult.to_csv(root / "owner.csv", index=False)
    data = load_dataset(root / "owner.csv")
    inputs = release_inputs(data, seed=3, holdout=0.3)
    spec = RunSpec(
        data_name=data.source_name,
        data_fingerprint=inputs.fingerprint,
        schema=inputs.schema.to_dict(),
        sizes=inputs.sizes,
        generator="synthpop",
        # The split these tiny sizes were chosen with: some records' upper bounds stay below 1.
        generator_params={"categorical_splits": "ordinal"},
        attack=AttackSettings(n_shadow=8, n_eval=8),
        targets=TargetSelection.plan(outliers=3, random=3),
        threshold=T,
        seed=3,
        setup=inputs.setup,
    )
    return start_run(root / "runs", spec, inputs.table, workers=1)


@pytest.fixture(scope="module")
def left(parent: RunFolder) -> RunFolder:
    # A t that leaves out some audited records (upper bound above t) and keeps others.
    highs = np.sort(parent.records()["risk_model_seeded_high"].to_numpy(float))
    assert highs[0] < highs[-1]
    t = float((highs[0] + highs[-1]) / 2)
    folder, reuse = create_remedy(parent, Remedy(leave_out="at-risk-and-undecided", threshold=t))
    assert reuse["attacks"] > 0 and reuse["shadow_out"] > 0
    return execute(folder, workers=1)


def test_a_left_out_record_is_in_neither_the_new_d_nor_its_release(
    parent: RunFolder, left: RunFolder
) -> None:
    spec = left.spec()
    assert spec.left_out and spec.parent is not None and spec.parent["run_id"] == parent.run_id
    table = left.load_table()
    split = run_split(spec, len(table))
    assert not set(spec.left_out) & set(split.target.tolist())
    assert not set(spec.left_out) & set(split.eval.tolist())
    # D_aux and the reference records are the parent's.
    old = run_split(parent.spec(), len(parent.load_table()))
    assert np.array_equal(split.aux, old.aux) and np.array_equal(split.reference, old.reference)
    assert len(split.target) == len(old.target) - len(spec.left_out)
    release = make_release(left, accept_risk=True)
    # The release is the generator fitted on the new D: none of the left-out rows is in it as trained data.
    assert release.card["data"]["left_out"] == list(spec.left_out)
    assert release.card["remedy_of"]["run_id"] == parent.run_id
    assert len(release.table) == len(old.target)  # the audited release size is the parent's
    assert not set(spec.left_out) & set(left.records()["record_id"].tolist())


def test_the_re_audit_plays_the_model_seeded_game_alone_and_says_so(left: RunFolder) -> None:
    records = left.records()
    assert (records["verdict_traditional"] == NOT_RUN).all()
    assert records["risk_traditional"].isna().all() and records["risk_model_seeded"].notna().all()
    assert left.summary()["games"] == "model-seeded"


def test_reuse_is_exact_a_fresh_run_of_the_same_spec_gives_the_same_scores(
    left: RunFolder, tmp_path: Path
) -> None:
    spec = replace(left.spec(), parent=None)
    fresh = start_run(tmp_path, spec, left.load_table(), workers=1)
    a, b = left.records(), fresh.records()
    assert a["record_id"].tolist() == b["record_id"].tolist()
    for rid in a["record_id"]:
        mine, theirs = left.load_target(int(rid)), fresh.load_target(int(rid))
        assert np.array_equal(mine["ms_scores"], theirs["ms_scores"])
        assert np.array_equal(mine["classifier"], theirs["classifier"])


def test_paired_re_audits_share_record_ids_and_seeds(parent: RunFolder, left: RunFolder) -> None:
    assert left.spec().seed == parent.spec().seed
    pairs = paired_risks(parent, left)
    both = pairs.dropna(subset=["risk_after"])
    assert len(both) >= 1
    assert set(both["record_id"]) <= set(parent.records()["record_id"]) & set(left.records()["record_id"])
    gone = pairs[pairs["verdict_after"] == "left out"]
    assert set(gone["record_id"]) == set(left.spec().left_out)


def test_a_generalise_remedy_keeps_ids_and_seed_and_recomputes_everything(
    parent: RunFolder, tmp_path: Path
) -> None:
    folder, reuse = create_remedy(parent, Remedy(generalise=("min-leaf", 20), games="both"), tmp_path)
    assert reuse == {"exact": False, "shadow_out": 0, "attacks": 0}
    spec = folder.spec()
    assert spec.generator_params["min_samples_leaf"] == 20 and spec.seed == parent.spec().seed
    assert run_split(spec, len(folder.load_table())) == run_split(parent.spec(), len(parent.load_table()))


def test_a_private_remedy_trains_mst_with_every_attack_that_applies_and_says_what_it_proves(
    parent: RunFolder, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec, _, exact = plan_remedy(parent, Remedy(private=0.5))
    assert spec.generator == "mst" and spec.generator_params["epsilon"] == 0.5 and not exact
    # The parent chose TAPAS alone: so does the re-audit. A parent with every attack that applies
    # to Synthpop gets every attack that applies to MST, whose tree the marginal attack reads.
    assert spec.attack.attacks == parent.spec().attack.attacks == ("tapas",)
    from privgame.settings.attacks import resolve_attacks

    synthpop_all = resolve_attacks("all", setup="release", generator="synthpop")
    everything = replace(parent.spec(), attack=replace(parent.spec().attack, attacks=synthpop_all))
    widened = remedy_module._attacks_for(everything, "mst", {"epsilon": 0.5})
    assert "marginal" not in synthpop_all and set(synthpop_all) < set(widened) and "marginal" in widened
    assert spec.parent is not None and spec.parent["remedies"]["private"] == 0.5
    assert "train with mst (differentially private) at epsilon = 0.5" in spec.parent["description"]
    assert "read off the private data" in (remedy_module.private_note(spec) or "")
    assert remedy_module.private_note(parent.spec()) is None
    # From the command line, with what the guarantee needs said before the re-audit.
    args = ["remedy", str(parent.path), "--private", "0.5", "--no-run", "--out", str(tmp_path)]
    assert main(args) == 0
    assert "private training: the domain (categories and bounds) was read off" in capsys.readouterr().err
    (made,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert RunFolder(made).spec().generator == "mst"


@pytest.mark.parametrize(
    ("remedy", "message"),
    [
        (Remedy(private=0.0), "--private 0.0: epsilon must be a positive number"),
        (Remedy(private=float("nan")), "epsilon must be a positive number"),
        (Remedy(private=1.0, generalise=("min-leaf", 20)), "--private replaces the generator"),
    ],
)
def test_a_bad_private_remedy_is_named(parent: RunFolder, remedy: Remedy, message: str) -> None:
    with pytest.raises(ParameterError) as raised:
        plan_remedy(parent, remedy)
    assert any(message in problem for problem in raised.value.problems), raised.value.problems


def test_coarsening_merges_rare_categories_and_bins_a_column(parent: RunFolder, tmp_path: Path) -> None:
    folder, _ = create_remedy(parent, Remedy(merge_rare=(("workclass", 30),), bins=(("age", 4),)), tmp_path)
    table = folder.load_table()
    assert "(rare)" in set(table["workclass"])
    assert table["age"].nunique() <= 4 and str(table["age"].iloc[0]).startswith("[")
    schema = {c["name"]: c for c in folder.spec().schema["columns"]}
    assert schema["age"]["role"] == "categorical"
    assert len(table) == len(parent.load_table())  # rows keep their ids


def test_compare_two_runs_of_a_family(
    parent: RunFolder, left: RunFolder, capsys: pytest.CaptureFixture[str]
) -> None:
    table = compare_runs([parent, left])
    assert table["run_id"].tolist() == [parent.run_id, left.run_id]
    assert table.loc[1, "parent"] == parent.run_id
    assert table.loc[1, "rmsd"] == NOT_RUN and table.loc[0, "rmsd"] != NOT_RUN
    assert table.loc[0, "downstream"] == NOT_MEASURED
    assert table.loc[1, "audited"] == len(left.records())
    assert [f.run_id for f in family(left)][:1] == [parent.run_id]
    assert main(["compare", str(parent.path), str(left.path), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[1]["remedy"].startswith("leave out")


def test_bad_input_gives_clear_errors(parent: RunFolder, tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match="not a used column"):
        create_remedy(parent, Remedy(bins=(("no such column", 3),)), tmp_path)
    with pytest.raises(ParameterError, match=r"between 0\.5 and 1"):
        create_remedy(parent, Remedy(leave_out="at-risk", threshold=1.5), tmp_path)
    with pytest.raises(ParameterError, match="nothing to leave out"):
        create_remedy(parent, Remedy(leave_out="at-risk", threshold=0.99), tmp_path)
    with pytest.raises(ParameterError, match="no remedy given"):
        create_remedy(parent, Remedy(), tmp_path)
    with pytest.raises(ParameterError, match="has no parameter 'epsilon'"):
        create_remedy(parent, Remedy(generalise=("epsilon", 0.5)), tmp_path)
    with pytest.raises(ParameterError, match="min-leaf=N"):
        parse_generalise("leaf=3")
    # A setting that fits the data as closely or more closely is not a remedy.
    audited = parent.spec().generator_params.get("min_samples_leaf", 5)
    for weaker in (1, audited):
        with pytest.raises(ParameterError, match=rf"min-leaf={weaker} is not a remedy.*a larger value"):
            create_remedy(parent, Remedy(generalise=("min-leaf", weaker)), tmp_path)
    with pytest.raises(ParameterError, match="whole number"):
        parse_merge_rare("workclass:x")
    with pytest.raises(ParameterError, match="COLUMN:N"):
        parse_bin("age")
    # A huge count ended in a traceback from numpy; now a count above the column's distinct values
    # in D, or above any sensible one, is refused with the fix.
    with pytest.raises(ParameterError, match="from 2 to 1,000,000"):
        parse_bin("age:99999999999999999999")
    with pytest.raises(ParameterError, match="distinct values of age"):
        create_remedy(parent, Remedy(bins=(("age", 100_000),)), tmp_path)
    assert main(["remedy", str(parent.path), "--bin", "nope:3", "--no-run"]) == 2


def test_old_specs_serialise_as_before() -> None:
    spec = RunSpec(
        data_name="x",
        data_fingerprint="f",
        schema={},
        sizes={"aux": 1, "eval": 2, "target": 1},
        generator="identity",
    )
    data = json.loads(spec.to_json())
    assert "left_out" not in data and "parent" not in data and "games" not in data["attack"]
    again = RunSpec.from_json(spec.to_json())
    assert again == spec
    child = replace(
        spec, left_out=(3, 1), parent={"run_id": "p"}, attack=replace(spec.attack, games="model-seeded")
    )
    assert RunSpec.from_json(child.to_json()) == child


def _page(name: str, **query: str):  # type: ignore[no-untyped-def]
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=120).run()
    at.query_params.update(query)
    return at.switch_page(f"pages/{name}.py").run()


def test_the_pages_show_a_remedy_run_and_its_family(
    parent: RunFolder, left: RunFolder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRIVGAME_RUNS", str(parent.path.parent))
    results = _page("3_Results", run=left.run_id)
    assert not results.exception, [e.value for e in results.exception]
    shown = "\n".join(str(m.value) for m in results.metric)
    assert "not run" in shown
    record = _page("4_Record", run=left.run_id)
    assert not record.exception, [e.value for e in record.exception]
    export = _page("6_Export", run=left.run_id)
    assert not export.exception, [e.value for e in export.exception]
    assert any("traditional game was not run" in str(m.value) for m in export.markdown)
    remedies = _page("9_Remedies", run=parent.run_id)
    assert not remedies.exception, [e.value for e in remedies.exception]
    assert remedies.get("plotly_chart") and remedies.dataframe
    table = remedies.dataframe[0].value
    assert set(table["run"]) >= {parent.run_id, left.run_id}
    remedies.radio(key="remedy-leave").set_value("at-risk-and-undecided").run()
    assert any("would leave D" in str(c.value) for c in remedies.caption)
    assert remedies.radio(key="remedy-sample").value == "kept"
    # The re-audit's attacker is the parent's unless chosen; leave-one-out plays one game only.
    assert remedies.radio(key="remedy-attacker").value == parent.spec().attack.attacker
    remedies.radio(key="remedy-attacker").set_value("leave-one-out").run()
    assert remedies.radio(key="remedy-games").disabled
    assert list(table.columns[:4]) == ["run", "remedy of", "remedy", "attacker"]
    # Only the settings of the run's generator are offered, with a stronger value to start from.
    generalise = remedies.selectbox(key="remedy-generalise")
    assert generalise.options == ["keep its settings", "larger minimum leaf size (Synthpop)"]
    generalise.set_value("min-leaf").run()
    audited = parent.spec().generator_params.get("min_samples_leaf", 5)
    assert remedies.number_input(key="remedy-generalise-value-min-leaf").value == 2 * audited
    # Training privately replaces the generator, so it is offered only without a generalisation.
    assert remedies.checkbox(key="remedy-private").disabled
    generalise.set_value("none").run()
    remedies.checkbox(key="remedy-private").check().run()
    assert not remedies.exception, [e.value for e in remedies.exception]
    assert remedies.number_input(key="remedy-private-epsilon").value == 1.0
    captions = " ".join(str(c.value) for c in remedies.caption)
    assert "read off the data, so MST's guarantee would not hold" in captions


def test_compare_shows_utility_once_measured_and_the_privacy_utility_chart_draws_it(
    parent: RunFolder, left: RunFolder
) -> None:
    from privgame.analysis.utility import measure_utility
    from privgame.outputs.figures import privacy_utility_chart

    for folder in (parent, left):
        measure_utility(folder, samples=2, target_column="income")
    table = compare_runs([parent, left])
    assert all(isinstance(v, float) for v in table["downstream"])
    assert all(0.0 <= v <= 1.0 for v in table["fidelity"])
    chart = privacy_utility_chart(table)
    assert len(chart.data) == int(table["share_at_risk"].notna().sum())


def test_the_family_option_measures_only_the_runs_without_utility(
    parent: RunFolder, left: RunFolder, capsys: pytest.CaptureFixture[str]
) -> None:
    from privgame.analysis.utility import family_target_column, measure_utility, stored_utility, unmeasured
    from privgame.cli.main import main

    members = family(parent)
    assert [f.run_id for f in members][:1] == [parent.run_id] and left.run_id in {f.run_id for f in members}
    measure_utility(parent, samples=2, target_column="income")
    # A run measured on another column is measured again for the family's column.
    measure_utility(left, samples=2, target_column="race")
    assert family_target_column(members) == "income"
    assert [f.run_id for f in unmeasured(members, "income")] == [left.run_id]
    assert unmeasured(members, None) == []

    assert main(["utility", str(parent.path), "--family", "--samples", "2"]) == 0
    out = capsys.readouterr()
    assert "1 to measure, predicting 'income'" in out.err
    assert f"{left.run_id}:" in out.out and f"{parent.run_id}:" not in out.out
    report = stored_utility(left)
    assert report is not None and report.target_column == "income"
    assert unmeasured(family(left), "income") == []


def _kept_records(folder: RunFolder) -> set[int]:
    records = folder.records()
    masks = group_masks(records, folder.spec())
    defined = records["risk_model_seeded"].notna().to_numpy()
    return {int(r) for r in records.loc[masks["random"] & defined, "record_id"]}


def test_a_leave_out_keeps_the_parents_sample_and_reads_its_share_conservatively(
    parent: RunFolder, left: RunFolder
) -> None:
    spec = left.spec()
    sampled = _kept_records(parent)
    kept = set(spec.targets.sample_ids)
    assert kept and kept == sampled - set(spec.left_out)
    assert spec.parent is not None and spec.parent["remedies"]["sample"] == "kept"
    assert spec.parent["kept_sample"] == {
        "records_in_d": parent.spec().sizes["target"],
        "sampled": len(sampled),
        "removable": len(sampled & set(spec.left_out)),
        "left_out": len(spec.left_out),
    }
    # The kept records keep their trained attacks: the re-audit made no shadow fits for them.
    for record_id in kept:
        assert np.array_equal(
            left.load_target(record_id)["classifier"], parent.load_target(record_id)["classifier"]
        )
    share = share_at_risk(left.records(), spec, spec.threshold)
    assert share is not None and share["method"] == "kept sample"
    assert share["text"].startswith("Between") and "kept from the parent run's random sample" in share["text"]
    assert 0.0 <= share["low"] <= share["high"] <= 1.0
    assert "records are at risk (95%)" in left.summary()["answer"]["text"]


def test_a_fresh_sample_is_drawn_on_request_and_after_a_kept_one(
    parent: RunFolder, left: RunFolder, tmp_path: Path
) -> None:
    t = float(left.spec().parent["remedies"]["threshold"])  # type: ignore[index]
    spec, _, _ = plan_remedy(parent, Remedy(leave_out="at-risk-and-undecided", threshold=t, sample="fresh"))
    assert spec.targets.sample_ids == () and "kept_sample" not in spec.parent  # type: ignore[operator]
    assert spec.parent["remedies"]["sample"] == "fresh"  # type: ignore[index]
    assert share_at_risk(parent.records(), replace(spec, parent=None), t) is not None
    # Only runs that audit a random sample (not all of D) have one to keep or redraw.
    assert draws_sample(parent.spec())
    outliers_only = replace(parent.spec(), targets=TargetSelection.plan(outliers=3, random=0))
    assert not draws_sample(outliers_only)
    assert not draws_sample(replace(parent.spec(), targets=TargetSelection(mode="all", k=None)))
    # Every sampled record left out: nothing to keep.
    sampled = _kept_records(parent)
    assert kept_sample_ids(parent, sorted(sampled)) is None
    assert kept_sample_ids(parent, []) == sorted(sampled)
    # A remedy of a run whose sample was kept: that sample is not uniform, so a fresh one is drawn.
    highs = np.sort(left.records()["risk_model_seeded_high"].to_numpy(float))
    child, _, _ = plan_remedy(
        left, Remedy(leave_out="at-risk-and-undecided", threshold=float(highs[-1]) - 1e-9)
    )
    assert child.targets.sample_ids == () and "kept_sample" not in child.parent  # type: ignore[operator]
    # The command line's --sample reaches the remedy.
    assert main(["remedy", str(parent.path), "--leave-out", "at-risk-and-undecided", "--threshold", str(t),
                 "--sample", "fresh", "--no-run", "--out", str(tmp_path)]) == 0  # fmt: skip
    (made,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert RunFolder(made).spec().targets.sample_ids == ()
    with pytest.raises(ParameterError, match="--sample 'nope' is unknown"):
        create_remedy(parent, Remedy(leave_out="at-risk", sample="nope"), tmp_path)


@pytest.mark.parametrize(
    ("name", "value", "audited", "refused"),
    [
        ("min-leaf", 10, 5, False),
        ("min-leaf", 5, 5, True),
        ("min-leaf", 1, 5, True),
        ("epsilon", 0.5, 1.0, False),
        ("epsilon", 1.0, 1.0, True),
        ("epsilon", 10.0, 1.0, True),
        ("epsilon", 1.0, float("inf"), False),
        ("bins", 5, 10, False),
        ("bins", 20, 10, True),
    ],
)
def test_only_a_stronger_setting_is_a_generalise_remedy(
    name: str, value: float, audited: float, refused: bool
) -> None:
    assert bool(remedy_module._not_stronger(name, value, audited)) is refused


def test_a_remedy_asked_for_twice_is_made_once(
    parent: RunFolder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second click, or the same remedy after a reload, follows the run made the first time
    (resuming it when it stopped) instead of starting a duplicate that competes for the cores."""
    import shutil

    import privgame.runs.background as background

    shutil.copytree(parent.path, tmp_path / parent.run_id)
    copy = RunFolder(tmp_path / parent.run_id)
    launched: list[str] = []
    monkeypatch.setattr(background, "launch", lambda folder, **kw: launched.append(folder.run_id))
    remedy = Remedy(generalise=("min-leaf", 20))
    first, new = background.launch_remedy(copy, remedy)
    assert new and launched == [first.run_id]
    again, new_again = background.launch_remedy(copy, remedy)
    assert again.path == first.path and not new_again
    assert launched == [first.run_id, first.run_id]  # never started, so resumed: not made again
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([copy.run_id, first.run_id])
    other, new_other = background.launch_remedy(copy, Remedy(generalise=("min-leaf", 40)))
    assert new_other and other.path != first.path  # another remedy is another run


def test_clicks_answered_on_concurrent_threads_make_one_remedy(
    parent: RunFolder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dashboard answers a second click on a new thread while the first is still making the
    run (Streamlit's fast reruns): both threads find or make the same one run."""
    import shutil
    import time

    import privgame.runs.background as background

    shutil.copytree(parent.path, tmp_path / parent.run_id)
    copy = RunFolder(tmp_path / parent.run_id)
    monkeypatch.setattr(background, "launch", lambda folder, **kw: None)
    slow = remedy_module.create_remedy

    def create_slowly(*args: object, **kwargs: object) -> object:
        time.sleep(0.3)  # the window a second click fell into: checking the generator on the new D
        return slow(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(remedy_module, "create_remedy", create_slowly)

    def click() -> tuple[str, bool]:
        folder, new = background.launch_remedy(copy, Remedy(generalise=("min-leaf", 20)))
        return folder.run_id, new

    made = at_once(click)
    assert len(made) == 3 and len({run_id for run_id, _ in made}) == 1
    assert sorted(new for _, new in made) == [False, False, True]
    assert len([p for p in tmp_path.iterdir() if p.name != copy.run_id]) == 1


def test_a_remedy_launched_on_its_own_thread_is_made_once_and_reports_its_error(
    parent: RunFolder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dashboard's click starts the launch on a thread of its own, which a later click or a
    reload cannot stop: asked for again while it is being made, the same launch is returned; a
    remedy that cannot be made keeps its error for the page to show."""
    import shutil

    import privgame.runs.background as background

    shutil.copytree(parent.path, tmp_path / parent.run_id)
    copy = RunFolder(tmp_path / parent.run_id)
    monkeypatch.setattr(background, "launch", lambda folder, **kw: folder.write_status(state="queued"))
    remedy = Remedy(generalise=("min-leaf", 20))
    first = background.start_remedy_launch(copy, remedy)
    again = background.start_remedy_launch(copy, remedy)
    assert first.thread is not None
    first.thread.join(timeout=120)
    if again is not first:  # the first ended before the second asked: that one finds its run
        assert again.thread is not None
        again.thread.join(timeout=120)
        assert again.folder is not None and again.folder.path == first.folder.path and not again.new
    assert first.error is None and first.new and first.folder is not None
    assert len([p for p in tmp_path.iterdir() if p.name != copy.run_id]) == 1
    assert first in background.remedy_launches(copy) and not first.making()
    background.forget_remedy_launch(first)
    background.forget_remedy_launch(again)
    assert background.remedy_launches(copy) == []
    weaker = background.start_remedy_launch(copy, Remedy(generalise=("min-leaf", 1)))
    assert weaker.thread is not None
    weaker.thread.join(timeout=120)
    assert weaker.folder is None and isinstance(weaker.error, ParameterError)
    assert "min-leaf" in str(weaker.error) or "min-leaf" in " ".join(weaker.error.problems)
    background.forget_remedy_launch(weaker)


def test_the_remedies_page_follows_a_remedy_under_way_after_a_reload(
    parent: RunFolder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil
    import time

    shutil.copytree(parent.path, tmp_path / parent.run_id)
    copy = RunFolder(tmp_path / parent.run_id)
    child, _ = create_remedy(copy, Remedy(generalise=("min-leaf", 20)))
    child.write_status(state="running", fits_done=3, fits_total=12, updated=time.time())
    monkeypatch.setenv("PRIVGAME_RUNS", str(tmp_path))
    page = _page("9_Remedies", run=copy.run_id)  # a fresh session: nothing remembered
    assert not page.exception, [e.value for e in page.exception]
    texts = "\n".join(str(e.value) for e in page.info)
    assert f"Re-auditing the remedy run {child.run_id}" in texts.replace("\\", "")
    assert page.button(key="start-remedy").disabled
    assert any("re-audit is under way" in str(c.value) for c in page.caption)


def test_the_remedy_command_makes_a_remedy_once(
    parent: RunFolder, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["remedy", str(parent.path), "--generalise", "min-leaf=30", "--no-run", "--out", str(tmp_path)]
    assert main(argv) == 0
    (made,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    capsys.readouterr()
    assert main(argv) == 0  # the same remedy again: no second run
    out, err = capsys.readouterr()
    assert [p for p in tmp_path.iterdir() if p.is_dir()] == [made]
    assert f"was made before, as {made.name} (created)" in err and out.strip() == str(made)
    assert main([*argv[:-3], "--workers", "1", "--quiet", "--out", str(tmp_path)]) == 0  # finishes it
    assert RunFolder(made).is_done() and [p for p in tmp_path.iterdir() if p.is_dir()] == [made]


def test_at_risk_and_undecided_with_none_undecided_is_the_at_risk_remedy(
    parent: RunFolder, tmp_path: Path
) -> None:
    import shutil

    copy = RunFolder(shutil.copytree(parent.path, tmp_path / parent.run_id))
    records = copy.records()
    low = np.full(len(records), 0.2)
    low[:2] = 0.95  # two records at risk at t = 0.8, every other one shown safe: none undecided
    records = records.assign(risk_model_seeded_low=low, risk_model_seeded_high=np.where(low > 0.9, 0.99, 0.6))
    copy.write_results(records, copy.scores(), copy.summary())
    widest, _, _ = plan_remedy(copy, Remedy(leave_out="at-risk-and-undecided", threshold=0.8))
    at_risk, _, _ = plan_remedy(copy, Remedy(leave_out="at-risk", threshold=0.8))
    assert widest.to_json() == at_risk.to_json()  # so a second click on either finds the first run
    made, _ = create_remedy(copy, Remedy(leave_out="at-risk", threshold=0.8), tmp_path)
    assert find_remedy(copy, widest, tmp_path) is not None
    assert find_remedy(copy, widest, tmp_path).path == made.path


def _cancelled_remedy(parent: RunFolder, root: Path, remedy: Remedy) -> RunFolder:
    """A copy of ``parent`` under ``root`` and its remedy ``remedy``, started and cancelled after
    its first units (the engine's own cancel, as the Runs page's Cancel asks for it)."""
    import shutil

    copy = RunFolder(shutil.copytree(parent.path, root / parent.run_id))
    child, _ = create_remedy(copy, remedy)
    polls = iter(range(10_000))
    execute(child, workers=1, cancel=lambda: next(polls) > 1)
    assert child.status()["state"] == "cancelled"
    return child


def test_a_cancelled_re_audit_is_found_again_listed_with_resume_and_resumed(
    parent: RunFolder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a cancel the Remedies page, opened again for the audited run, lists the stopped
    re-audit with a Resume action; resuming it, or asking for the same remedy again, goes on with
    that run instead of starting a second one."""
    import privgame.runs.background as background
    from privgame.runs.remedy import remedy_runs, stopped_remedies

    remedy = Remedy(generalise=("min-leaf", 20), threshold=T, attacker=parent.spec().attack.attacker)
    child = _cancelled_remedy(parent, tmp_path, remedy)
    copy = RunFolder(tmp_path / parent.run_id)
    assert [f.path for f in remedy_runs(copy)] == [f.path for f in stopped_remedies(copy)] == [child.path]
    launched: list[str] = []

    def launch(folder: RunFolder, **kwargs: object) -> None:
        launched.append(folder.run_id)
        folder.write_status(state="queued")

    monkeypatch.setattr(background, "launch", launch)
    monkeypatch.setenv("PRIVGAME_RUNS", str(tmp_path))
    page = _page("9_Remedies", run=copy.run_id)  # a fresh session: nothing remembered
    assert not page.exception, [e.value for e in page.exception]
    warnings = "\n".join(str(w.value) for w in page.warning).replace("\\", "")
    assert child.run_id in warnings and "cancelled" in warnings and "generator fits done" in warnings
    page.button(key=f"resume-remedy-{child.run_id}").click().run()
    assert not page.exception, [e.value for e in page.exception]
    assert launched == [child.run_id]
    assert f"Re-auditing the remedy run {child.run_id}" in "\n".join(str(e.value) for e in page.info).replace(
        "\\", ""
    )
    assert page.button(key="start-remedy").disabled
    # Cancelled again while followed: listed again at once, and the start is free again.
    child.write_status(state="cancelled")
    page.run()
    assert page.button(key=f"resume-remedy-{child.run_id}") and not page.button(key="start-remedy").disabled
    # The same remedy asked for again, in a fresh session: the cancelled run goes on, no second run.
    page = _page("9_Remedies", run=copy.run_id)
    page.selectbox(key="remedy-generalise").set_value("min-leaf").run()
    page.number_input(key="remedy-generalise-value-min-leaf").set_value(20).run()
    page.button(key="start-remedy").click().run()
    for launch_made in background.remedy_launches(copy):
        assert launch_made.thread is not None
        launch_made.thread.join(timeout=120)
        background.forget_remedy_launch(launch_made)
    assert launched == [child.run_id, child.run_id]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([copy.run_id, child.run_id])


def test_the_remedy_command_prints_the_re_audits_estimate_and_dry_run_writes_nothing(
    parent: RunFolder, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The re-audit's generator fits and time, from the estimate a run gets (the plan's fits by
    :func:`privgame.games.estimate.breakdown`), before anything starts; --dry-run stops there."""
    from privgame.games.context import build_context, plan_summary

    spec, table, _ = plan_remedy(parent, Remedy(generalise=("min-leaf", 30)))
    fits = plan_summary(spec, len(build_context(spec, table)[1]), table=table)["total_fits"]
    argv = [
        "remedy",
        str(parent.path),
        "--generalise",
        "min-leaf=30",
        "--workers",
        "1",
        "--out",
        str(tmp_path),
    ]
    assert main([*argv, "--dry-run"]) == 0
    out, _ = capsys.readouterr()
    assert f"{fits:,} generator fits, about" in out and "with 1 worker process" in out
    assert "nothing was written" in out and not list(tmp_path.iterdir())
    assert main(argv) == 0
    _, err = capsys.readouterr()
    assert err.index(f"estimated re-audit: {fits:,} generator fits") < err.index("remedy of")
    assert main([*argv, "--dry-run"]) == 0  # made now: the dry run says so, and writes nothing more
    assert "was made before" in capsys.readouterr().out and len(list(tmp_path.iterdir())) == 1


def test_a_leave_out_estimate_counts_only_the_fits_the_parents_checkpoints_do_not_spare(
    parent: RunFolder, left: RunFolder
) -> None:
    from privgame.runs.remedy import estimate_remedy

    remedy = Remedy(
        leave_out="at-risk-and-undecided", threshold=(left.spec().parent or {})["remedies"]["threshold"]
    )
    estimate = estimate_remedy(parent, remedy, workers=1)
    spec = left.spec()
    reused = left.status()["remedy_reuse"]
    assert estimate.reused_fits == reused["attacks"] * (spec.attack.n_shadow // 2) + spec.attack.n_shadow // 2
    # The engine counts the copied shared checkpoints as done, the reused attacks not at all.
    assert estimate.fits == left.status()["fits_total"] - spec.attack.n_shadow // 2
    assert estimate.seconds > 0 and "more reused from the parent run" in estimate.text


def test_the_remedies_page_shows_the_estimate_before_the_start(
    parent: RunFolder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRIVGAME_RUNS", str(parent.path.parent))
    page = _page("9_Remedies", run=parent.run_id)
    assert any("Choose a remedy above" in str(c.value) for c in page.caption)
    page.selectbox(key="remedy-generalise").set_value("min-leaf").run()
    assert not page.exception, [e.value for e in page.exception]
    shown = "\n".join(str(e.value) for e in page.info).replace("\\", "")
    assert "This remedy's re-audit:" in shown and "generator fits, about" in shown
    assert not page.button(key="start-remedy").disabled


def test_leave_out_at_risk_together_takes_the_records_holm_names(parent: RunFolder) -> None:
    from privgame.games.audit import set_level
    from privgame.runs.remedy import leave_out_ids

    t = parent.spec().threshold
    together = leave_out_ids(parent, "at-risk-together", t)
    each = leave_out_ids(parent, "at-risk", t)
    assert together == sorted(set_level(parent.records(), t)["holm_ids"])
    assert set(together) <= set(each)
    problems = Remedy(leave_out="at-risk-together", screened=True).problems()
    assert any("at-risk-together reads the exact game's verdicts as a set" in p for p in problems)
    with pytest.raises(ParameterError, match="use --leave-out at-risk with --screened"):
        leave_out_ids(parent, "at-risk-together", t, screened=True)
