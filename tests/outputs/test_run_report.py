"""Tests of privgame.outputs.run_report: high-risk list, safe exports, record profile, HTML report."""

from __future__ import annotations

import html
import io
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from privgame.core import metrics
from privgame.core.errors import ParameterError, RunError
from privgame.data.schema import infer_schema
from privgame.data.splits import Sizes, split_indices
from privgame.games.preflight import create_run
from privgame.outputs import run_report as report
from privgame.settings.run_spec import AttackSettings, RunSpec, TargetSelection
from privgame.store.folders import RunFolder

SIZES = {"aux": 16, "eval": 20, "target": 10}
SEED = 5


def make_run(root: Path, *, done: bool = True) -> RunFolder:
    """A hand-made finished run on a 40-row table; the last two records of D are not evaluated."""
    rng = np.random.default_rng(7)
    n = 40
    table = pd.DataFrame(
        {
            "colour": rng.choice(["red", "red", "red", "blue", "green"], n),
            "size": np.round(rng.normal(50.0, 10.0, n), 1),
            "note": rng.choice(["=SUM(A1)", "plain", "+44"], n),
        }
    )
    spec = RunSpec(
        data_name="<b>tiny</b>.csv",
        data_fingerprint="0" * 64,
        schema=infer_schema(table).to_dict(),
        sizes=dict(SIZES),
        generator="identity",
        attack=AttackSettings(n_shadow=4, n_eval=4),
        targets=TargetSelection(mode="all", k=None),
        threshold=0.8,
        seed=SEED,
    )
    folder = create_run(root, spec, table)
    if not done:
        return folder
    target = split_indices(n, Sizes(**SIZES), SEED).target
    evaluated = target[:-2]
    m = len(evaluated)
    ms = np.linspace(0.55, 0.98, m)
    tr = 0.5 + 0.5 * (ms - 0.5)
    rows = []
    score_frames = []
    for i, rid in enumerate(evaluated):
        row = {"record_id": int(rid), **table.iloc[int(rid)].to_dict()}
        for prefix, value in (("risk_model_seeded", ms[i]), ("risk_traditional", tr[i])):
            row[prefix] = value
            row[f"{prefix}_low"] = max(0.0, value - 0.1)
            row[f"{prefix}_high"] = min(1.0, value + 0.1)
            row[f"{prefix}_tpr_at_fpr_0.01"] = 0.0
            row[f"{prefix}_tpr_at_fpr_0.1"] = 0.25
        row["difference"] = ms[i] - tr[i]
        row["outlier_score"] = 0.1
        rows.append(row)
        for game in ("model_seeded", "traditional"):
            labels = np.tile([1, 0], 4).astype(np.int8)
            score_frames.append(
                pd.DataFrame(
                    {
                        "record_id": np.full(8, rid, dtype=np.int64),
                        "game": game,
                        "label": labels,
                        "index": np.arange(8),
                        "score": rng.random(8),
                    }
                )
            )
    records = pd.DataFrame(rows)
    summary = metrics.summarize(ms, tr, threshold=spec.threshold)
    summary["generator_metadata"] = {"dp_note": "No <i>DP</i> guarantee & no bounds."}
    summary["hoeffding_half_width_rho_0.05"] = metrics.hoeffding_half_width(2, 0.05)
    folder.write_results(records, pd.concat(score_frames, ignore_index=True), summary)
    folder.write_status(state="done")
    return folder


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> RunFolder:
    return make_run(tmp_path_factory.mktemp("runs"))


@pytest.fixture(scope="module")
def page(run: RunFolder) -> str:
    return report.html_report(run)


@pytest.fixture
def records() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "record_id": [1, 2, 3, 4, 5],
            "city": ["=cmd", "Leeds", "York", "Bath", "Hull"],
            "risk_model_seeded": [0.85, 0.95, 0.5, math.nan, 0.85],
            "risk_model_seeded_low": [0.82, 0.9, 0.4, math.nan, 0.81],
            "risk_model_seeded_high": [0.9, 1.0, 0.6, math.nan, 0.9],
            "risk_traditional": [0.9, 0.7, 0.5, 0.9, 0.6],
            "risk_traditional_low": [0.85, 0.6, 0.4, 0.8, 0.5],
            "risk_traditional_high": [0.95, 0.8, 0.6, 1.0, 0.7],
            "difference": [-0.05, 0.25, 0.0, math.nan, 0.25],
            "outlier_score": [0.1, 0.2, 0.3, 0.4, 0.5],
        }
    )


# --------------------------------------------------------------------------------------------
# high_risk
# --------------------------------------------------------------------------------------------


def test_high_risk_lists_the_records_at_risk_riskiest_first(records: pd.DataFrame) -> None:
    listed = report.high_risk(records, 0.8)
    assert listed["record_id"].tolist() == [2, 1, 5]  # ties (0.85) by record id; nan never listed
    assert set(listed["verdict_model_seeded"]) == {"at risk"}
    # "At risk" is the verdict, not the point risk: an interval that reaches down to t is undecided.
    undecided = records.assign(risk_model_seeded_low=[0.8, 0.9, 0.4, math.nan, 0.79])
    assert report.high_risk(undecided, 0.8)["record_id"].tolist() == [2]
    assert listed["missed_by_traditional"].tolist() == [True, False, True]
    assert list(listed.columns[:9]) == [
        "record_id",
        "risk_model_seeded",
        "risk_model_seeded_low",
        "risk_model_seeded_high",
        "risk_traditional",
        "risk_traditional_low",
        "risk_traditional_high",
        "difference",
        "missed_by_traditional",
    ]
    assert listed["city"].tolist() == ["Leeds", "=cmd", "Hull"]
    assert listed.index.tolist() == [0, 1, 2]
    assert report.high_risk(records, 0.95).empty  # strictly above t


def test_high_risk_rejects_bad_input(records: pd.DataFrame) -> None:
    with pytest.raises(ParameterError, match=r"between 0\.5 and 1"):
        report.high_risk(records, 1.2)
    with pytest.raises(ParameterError, match="lacks the columns"):
        report.high_risk(records.drop(columns="risk_traditional"), 0.8)


# --------------------------------------------------------------------------------------------
# CSV injection and serialisation
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"),
        ("+1", "'+1"),
        ("-1", "'-1"),
        ("@x", "'@x"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("a=b", "a=b"),
        ("", ""),
        (-1, -1),
        (-1.5, -1.5),
        (None, None),
    ],
)
def test_neutralise_cell(cell: object, expected: object) -> None:
    assert report.neutralise_cell(cell) == expected


def test_csv_safe_neutralises_text_and_leaves_numbers() -> None:
    frame = pd.DataFrame(
        {
            "text": ["=cmd", "+1", "-1", "@x", "safe"],
            "number": [-1, 2, -3, 4, 5],
            "mixed": pd.Series(["=1+1", -1, 2.5, None, "ok"], dtype=object),
            "category": pd.Categorical(["-a", "b", "-a", "b", "b"]),
            "=header": [1.0, -2.0, 3.0, 4.0, 5.0],
        }
    )
    safe = report.csv_safe(frame)
    assert safe["text"].tolist() == ["'=cmd", "'+1", "'-1", "'@x", "safe"]
    assert safe["number"].tolist() == [-1, 2, -3, 4, 5]
    assert safe["number"].dtype == frame["number"].dtype
    assert safe["mixed"].tolist()[:3] == ["'=1+1", -1, 2.5]
    assert safe["category"].tolist() == ["'-a", "b", "'-a", "b", "b"]
    assert list(safe.columns) == ["text", "number", "mixed", "category", "'=header"]
    assert frame["text"].iloc[0] == "=cmd"  # the input is not changed
    # the CSV bytes keep -1 a number and the text cells inert
    parsed = pd.read_csv(io.BytesIO(report.to_bytes(frame, "csv")))
    assert parsed["number"].tolist() == [-1, 2, -3, 4, 5]
    assert parsed["text"].tolist() == ["'=cmd", "'+1", "'-1", "'@x", "safe"]


@pytest.fixture
def table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "record_id": np.array([3, 1, 2], dtype=np.int64),
            "name": ["Ann", "Bo", "Cé"],
            "risk": [0.1, 1 / 3, math.nan],
            "flag": [True, False, True],
        }
    )


def test_to_bytes_csv_round_trip(table: pd.DataFrame) -> None:
    parsed = pd.read_csv(io.BytesIO(report.to_bytes(table, "csv")))
    assert parsed["record_id"].tolist() == [3, 1, 2]
    assert parsed["name"].tolist() == ["Ann", "Bo", "Cé"]
    assert parsed["risk"].iloc[1] == 1 / 3 and math.isnan(parsed["risk"].iloc[2])
    assert parsed["flag"].tolist() == [True, False, True]


def test_to_bytes_json_round_trip(table: pd.DataFrame) -> None:
    rows = json.loads(report.to_bytes(table, "json"))
    assert rows == [
        {"record_id": 3, "name": "Ann", "risk": 0.1, "flag": True},
        {"record_id": 1, "name": "Bo", "risk": 1 / 3, "flag": False},
        {"record_id": 2, "name": "Cé", "risk": None, "flag": True},
    ]
    back = pd.read_json(io.BytesIO(report.to_bytes(table, "json")), orient="records", precise_float=True)
    assert back["risk"].iloc[1] == 1 / 3


def test_to_bytes_parquet_round_trip(table: pd.DataFrame) -> None:
    back = pd.read_parquet(io.BytesIO(report.to_bytes(table, "parquet")))
    pd.testing.assert_frame_equal(back, table)


def test_to_bytes_unknown_format(table: pd.DataFrame) -> None:
    with pytest.raises(ParameterError, match="Unknown export format 'xlsx'"):
        report.to_bytes(table, "xlsx")


# --------------------------------------------------------------------------------------------
# record_profile
# --------------------------------------------------------------------------------------------


def test_record_profile_sets_values_beside_d(run: RunFolder) -> None:
    table = run.load_table()
    target = split_indices(len(table), Sizes(**SIZES), SEED).target
    rid = int(target[0])
    profile = report.record_profile(run, rid, k=3)
    assert profile["record_id"] == rid and profile["target_size"] == 10
    columns = profile["columns"].set_index("column")
    d = table.iloc[target]
    colour = columns.loc["colour"]
    assert colour["value"] == table.loc[rid, "colour"]
    assert colour["typical"] == d["colour"].value_counts().idxmax()
    assert colour["typical_is"] == "most common"
    assert colour["share_same"] == pytest.approx(np.mean(d["colour"] == table.loc[rid, "colour"]))
    size = columns.loc["size"]
    assert size["typical"] == pytest.approx(d["size"].median())
    value = table.loc[rid, "size"]
    expected = 100 * (np.sum(d["size"] < value) + 0.5 * np.sum(d["size"] == value)) / len(d)
    assert size["percentile"] == pytest.approx(expected)
    assert math.isnan(size["share_same"]) and math.isnan(colour["percentile"])
    assert "percentile" in size["rarity"] and "of D share this value" in colour["rarity"]
    neighbours = profile["neighbours"]
    assert len(neighbours) == 3
    assert rid not in neighbours["record_id"].tolist()
    assert set(neighbours["record_id"]) <= set(target.tolist())
    assert neighbours["distance"].is_monotonic_increasing
    assert list(neighbours.columns[:2]) == ["record_id", "distance"]
    assert {"colour", "size"} <= set(neighbours.columns)
    for _, row in neighbours.iterrows():
        assert row["colour"] == table.loc[row["record_id"], "colour"]
    assert profile["risks"]["record_id"] == rid
    assert 0.0 <= profile["risks"]["risk_model_seeded"] <= 1.0


def test_record_profile_of_a_record_of_d_not_evaluated(run: RunFolder) -> None:
    target = split_indices(len(run.load_table()), Sizes(**SIZES), SEED).target
    profile = report.record_profile(run, int(target[-1]))
    assert profile["risks"] is None
    assert len(profile["neighbours"]) == 5


def test_record_profile_rejects_records_outside_d(run: RunFolder) -> None:
    target = set(split_indices(len(run.load_table()), Sizes(**SIZES), SEED).target.tolist())
    outside = next(i for i in range(40) if i not in target)
    with pytest.raises(ParameterError, match=f"Record {outside} is not in the target dataset D"):
        report.record_profile(run, outside)
    with pytest.raises(ParameterError, match="whole number"):
        report.record_profile(run, "3")  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# html_report
# --------------------------------------------------------------------------------------------


def test_html_report_is_self_contained(page: str) -> None:
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"<script[^>]*\bsrc\s*=", page, flags=re.IGNORECASE)
    # outside the inlined scripts (whose bundle holds URL strings it never loads here), the
    # page links to nothing
    markup = re.sub(r"<script\b[^>]*>.*?</script>", "", page, flags=re.DOTALL | re.IGNORECASE)
    assert "http://" not in markup and "https://" not in markup
    assert "<h2>Summary</h2>" in markup and "Plotly.newPlot" not in markup
    assert not re.search(r"<link\b", page, flags=re.IGNORECASE)
    # plotly.js is inlined exactly once, and drives four charts
    assert page.count("Plotly.newPlot(") == 4
    assert len(re.findall(r"\* plotly\.js v\d", page)) == 1


def test_html_report_holds_spec_and_summary_numbers(run: RunFolder, page: str) -> None:
    records = run.records()
    summary = metrics.summarize(records["risk_model_seeded"], records["risk_traditional"])
    assert f"{summary['rmsd']:.3f}" in page
    assert f"{summary['missed']} of the {summary['at_risk']} records" in page
    assert f"{summary['miss_rate']:.3f}" in page
    assert "0" * 64 in page  # the data fingerprint
    assert run.run_id in page
    assert "identity" in page
    for label in ("N_shadow", "N_eval", "|D_aux|", "seed"):
        assert label in page
    for chart in ("Fig. 1a", "Fig. 1b", "Fig. 2a", "Fig. 2b"):
        assert chart in page
    assert "records with an undefined risk" not in page


def test_html_report_escapes_user_text(page: str) -> None:
    assert "<b>tiny</b>" not in page
    assert "&lt;b&gt;tiny&lt;/b&gt;.csv" in page
    assert "No &lt;i&gt;DP&lt;/i&gt; guarantee &amp; no bounds." in page  # the DP note
    assert "=SUM(A1)" in page  # values are shown (escaped HTML has nothing to escape here)


def test_html_report_at_another_threshold(run: RunFolder) -> None:
    page = report.html_report(run, 0.99)
    assert "miss rate at t=0.99" in page
    assert "undefined (no record has model-seeded risk above t)" in page
    assert "No record is at risk at t=0.99" in page
    with pytest.raises(ParameterError, match=r"between 0\.5 and 1"):
        report.html_report(run, 2.0)


def test_html_report_needs_a_finished_run(tmp_path: Path) -> None:
    folder = make_run(tmp_path, done=False)
    with pytest.raises(RunError, match="only once it is done"):
        report.html_report(folder)


@pytest.fixture(scope="module")
def release_run(tmp_path_factory: pytest.TempPathFactory) -> RunFolder:
    """A tiny finished release set-up run on 300 rows of Adult: a 0.3 holdout, 2 + 2 records."""
    return _release_run(tmp_path_factory.mktemp("release-report"))


def _release_run(root: Path, *, generator: str = "marginals", n_eval: int = 8) -> RunFolder:
    from privgame.data import BUNDLED_ADULT, load_dataset
    from privgame.games.engine import execute
    from privgame.settings.setups import release_inputs, with_setup

    table = pd.read_csv(BUNDLED_ADULT, na_values=["?"]).dropna().head(300)
    dataset = load_dataset(table.to_csv(index=False).encode(), filename="adult300.csv")
    inputs = release_inputs(dataset, seed=0)
    spec = RunSpec(
        **with_setup(
            {
                "data_name": dataset.source_name,
                "generator": generator,
                "attack": AttackSettings(n_shadow=8, n_eval=n_eval),
                "targets": TargetSelection.plan(outliers=2, random=2),
            },
            inputs,
        )
    ).validate()
    return execute(create_run(root, spec, inputs.table), workers=1)


def test_html_report_says_what_was_audited_and_keeps_the_groups_apart(release_run: RunFolder) -> None:
    from privgame.games.audit import run_summary

    page = report.html_report(release_run)
    summary = run_summary(release_run)
    assert "<h2>What was audited</h2>" in page
    for line in summary["setup_text"]:
        assert html.escape(line, quote=True) in page
    assert html.escape(summary["share_at_risk"]["text"], quote=True) in page
    groups = page[page.index("<table class='groups'>") :]
    groups = groups[: groups.index("</table>")]
    assert "most outlying" in groups and "random sample (share estimate)" in groups
    assert "Not a random sample, so not in the share." in groups
    assert "the audit plan: the 2 most outlying records of D and 2 random records of D" in page
    assert "release: D is the table less a holdout" in page


def test_html_report_holds_the_release_card(release_run: RunFolder) -> None:
    from privgame.outputs.release import release_card

    page = report.html_report(release_run)
    spec = release_run.spec()
    card = release_card(release_run, rows=spec.sizes["target"], seed=spec.seed)
    section = page[page.index("<h2>Release card</h2>") :]
    assert card["data"]["d_fingerprint"] in section
    assert card["data"]["population_fingerprint"] in section
    assert spec.data_fingerprint in section
    assert "marginals" in section and "210 rows, seed 0" in section
    assert html.escape(card["verdict"], quote=True) in section


def test_html_report_of_a_paper_run_has_no_share_and_a_card(page: str) -> None:
    assert "No uniform random sample of D was audited" not in page  # mode "all" is a census
    assert "Paper set-up (for research)" in page
    assert "<h2>Release card</h2>" in page and "not recorded (paper set-up)" in page


def test_exports_carry_the_audit_group(release_run: RunFolder) -> None:
    from privgame.cli.commands.export import export_bytes

    records = pd.read_csv(io.BytesIO(export_bytes(release_run, "records")))
    assert list(records.columns[:2]) == ["record_id", "audit_group"]
    assert set(records["audit_group"]) <= {"outlier", "random", "outlier+random"}
    risky = pd.read_csv(io.BytesIO(export_bytes(release_run, "high-risk", threshold=0.51)))
    at_risk = release_run.records()["risk_model_seeded_low"] > 0.51
    assert "audit_group" in risky.columns and len(risky) == int(at_risk.sum())


def test_every_table_of_the_html_report_scrolls_inside_the_page(release_run: RunFolder) -> None:
    page = report.html_report(release_run, 0.51)
    tables = re.findall(r"(.{0,40})<table", page)
    assert len(tables) >= 3  # the summary, the audit groups and the high-risk records
    assert all(before.endswith("<div class='wide'>") for before in tables), tables
    style = re.search(r"\.wide \{([^}]*)\}", page)
    assert style is not None and "overflow-x: auto" in style.group(1)


def test_the_html_report_opens_with_the_verdict_and_keeps_the_high_risk_table_narrow(
    release_run: RunFolder, tmp_path: Path
) -> None:
    from privgame.games.audit import answer

    page = report.html_report(release_run, 0.51)
    body = page[page.index("<body>") :]
    first = re.search(r"<p[^>]*>(.*?)</p>", body[body.index("</h1>") :], re.S)
    expected = answer(release_run.records(), release_run.spec(), 0.51)["text"]
    assert first is not None and first.group(1) == f"<strong>Verdict.</strong> {html.escape(expected)}"
    # A run with records at risk, so that the high-risk table has rows: the identity generator,
    # with enough evaluation runs for an interval above t.
    leaky = _release_run(tmp_path, generator="identity", n_eval=20)
    assert (leaky.records()["risk_model_seeded_low"] > 0.51).any()
    wide = report.html_report(leaky, 0.51)
    table = wide[wide.index("<table class='high-risk'>") :]
    header = table[: table.index("</thead>")]
    assert header.count("<th scope") <= 6  # record, group, two risks, missed, and one cell of values
    assert "the record&#x27;s values" in header and "<td class='values'>age: " in table


def test_the_verdicts_read_as_a_set_reach_the_summary_the_report_and_the_card(release_run: RunFolder) -> None:
    from privgame.games.audit import at_risk_p_values, run_summary
    from privgame.outputs.release import release_card

    summary = run_summary(release_run)
    found = summary["set_level"]
    records = release_run.records()
    assert found["judged"] == len(records)
    assert found["expected_false_at_most"] == pytest.approx(0.025 * len(records))
    assert found["text"].startswith(f"Read as a set: of {len(records)} records judged one by one")
    # The p-values say "at risk" exactly where the verdicts do, at the run's t and at another.
    for t in (summary["threshold"], 0.6):
        p = at_risk_p_values(records, t)
        verdicts = run_summary(release_run, t)["answer"]["counts"]
        assert int(np.sum(p < 0.025)) == verdicts["at risk"]
    assert set(found["holm_ids"]) <= set(found["bh_ids"]) <= set(records["record_id"])
    assert html.escape(found["text"], quote=True) in report.html_report(release_run)
    assert release_card(release_run, rows=50, seed=0)["audit"]["set_level"]["holm"] == found["holm"]
    for group in summary["groups"].values():
        assert group["at_risk_holm"] <= group["at_risk"]
