"""Tests of ``python -m privgame export``."""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from privgame.cli.commands import export
from privgame.core import metrics
from privgame.core.errors import ParameterError, RunError
from privgame.data.schema import infer_schema
from privgame.data.splits import Sizes, split_indices
from privgame.games.preflight import create_run
from privgame.outputs.run_report import high_risk
from privgame.settings.run_spec import AttackSettings, RunSpec, TargetSelection
from privgame.store.folders import RunFolder

ROOT = Path(__file__).resolve().parents[2]
# Runs privgame's real command line; registers ``export`` first when cli/main.py does not list it yet.
CLI = (
    "import sys\n"
    "from privgame.cli import main as cli\n"
    "from privgame.cli.commands import export\n"
    "if export not in cli.COMMANDS:\n"
    "    cli.COMMANDS.append(export)\n"
    "sys.exit(cli.main())\n"
)


def make_run(root: Path, *, done: bool = True) -> RunFolder:
    """A hand-made run on a 30-row table with 6 evaluated records of D."""
    rng = np.random.default_rng(3)
    table = pd.DataFrame(
        {
            "colour": rng.choice(["red", "blue", "green"], 30),
            "note": rng.choice(["=HYPERLINK(x)", "plain"], 30),
            "size": np.round(rng.normal(10.0, 2.0, 30), 2),
        }
    )
    sizes = {"aux": 12, "eval": 15, "target": 6}
    spec = RunSpec(
        data_name="tiny.csv",
        data_fingerprint="f" * 64,
        schema=infer_schema(table).to_dict(),
        sizes=sizes,
        generator="identity",
        attack=AttackSettings(n_shadow=4, n_eval=4),
        targets=TargetSelection(mode="all", k=None),
        threshold=0.8,
        seed=1,
    )
    folder = create_run(root, spec, table)
    if not done:
        return folder
    target = split_indices(30, Sizes(**sizes), 1).target
    ms = np.array([0.95, 0.9, 0.85, 0.7, 0.6, 0.5])
    tr = np.array([0.7, 0.85, 0.6, 0.65, 0.6, 0.5])
    records = pd.DataFrame(
        [
            {
                "record_id": int(rid),
                **table.iloc[int(rid)].to_dict(),
                "risk_model_seeded": ms[i],
                "risk_model_seeded_low": ms[i] - 0.04,
                "risk_model_seeded_high": min(1.0, ms[i] + 0.04),
                "risk_traditional": tr[i],
                "risk_traditional_low": tr[i] - 0.1,
                "risk_traditional_high": tr[i] + 0.1,
                "difference": ms[i] - tr[i],
            }
            for i, rid in enumerate(target)
        ]
    )
    scores = pd.DataFrame(
        {
            "record_id": np.repeat(target, 8),
            "game": np.tile(np.repeat(["model_seeded", "traditional"], 4), len(target)),
            "label": np.tile([1, 0], 4 * len(target)),
            "index": np.tile(np.arange(4), 2 * len(target)),
            "score": rng.random(8 * len(target)),
        }
    )
    folder.write_results(records, scores, metrics.summarize(ms, tr))
    folder.write_status(state="done")
    return folder


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> RunFolder:
    return make_run(tmp_path_factory.mktemp("runs"))


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", CLI, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
        check=False,
    )


def parse(*args: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="privgame")
    export.add_parser(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(["export", *args])


def test_export_writes_the_high_risk_csv(run: RunFolder, tmp_path: Path) -> None:
    out = tmp_path / "high.csv"
    result = cli("export", str(run.path), "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    written = pd.read_csv(out)
    assert written["record_id"].tolist() == high_risk(run.records(), 0.8)["record_id"].tolist()
    assert len(written) == 3
    # CSV cells from the data cannot run as spreadsheet formulas
    assert not written["value:note"].astype(str).str.startswith("=").any()


def test_export_of_a_missing_run_folder_exits_2_without_traceback(tmp_path: Path) -> None:
    result = cli("export", str(tmp_path / "no-such-run"), "-o", str(tmp_path / "x.csv"))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "no-such-run" in result.stderr and "privgame:" in result.stderr
    assert not (tmp_path / "x.csv").exists()


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet"])
def test_export_records_in_each_format(run: RunFolder, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / f"records.{fmt}"
    assert export.run(parse(str(run.path), "--what", "records", "--format", fmt, "-o", str(out))) == 0
    expected = run.records()
    if fmt == "csv":
        back = pd.read_csv(out)
    elif fmt == "json":
        back = pd.DataFrame(json.loads(out.read_bytes()))
    else:
        back = pd.read_parquet(out)
    assert back["record_id"].tolist() == expected["record_id"].tolist()
    np.testing.assert_array_equal(back["risk_model_seeded"], expected["risk_model_seeded"])


def test_export_high_risk_at_another_threshold(run: RunFolder, tmp_path: Path) -> None:
    out = tmp_path / "high.json"
    args = parse(str(run.path), "--threshold", "0.65", "--format", "json", "-o", str(out))
    assert export.run(args) == 0
    rows = json.loads(out.read_text())
    assert [r["risk_model_seeded"] for r in rows] == [0.95, 0.9, 0.85, 0.7]
    # Missed: at risk, and the traditional game does not put it at risk (0.7's interval
    # [0.6, 0.8] contains 0.65, so the traditional game leaves it undecided).
    assert [r["missed_by_traditional"] for r in rows] == [True, False, True, True]


def test_export_spec_and_html(run: RunFolder, tmp_path: Path) -> None:
    spec_out = tmp_path / "spec.json"
    assert export.run(parse(str(run.path), "--what", "spec", "-o", str(spec_out))) == 0
    assert json.loads(spec_out.read_text()) == run.spec().to_dict()
    html_out = tmp_path / "report.html"
    assert export.run(parse(str(run.path), "--what", "html", "-o", str(html_out))) == 0
    page = html_out.read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count("Plotly.newPlot(") == 4


def test_export_parser_follows_the_command_contract() -> None:
    args = parse("RUN", "-o", "out.csv")
    assert args.handler is export.run
    assert (args.what, args.format, args.threshold) == ("high-risk", None, None)


def test_export_to_stdout(run: RunFolder, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert export.run(parse(str(run.path), "--what", "records", "-o", "-")) == 0
    written = pd.read_csv(io.BytesIO(capsysbinary.readouterr().out))
    assert len(written) == 6


def test_export_rejects_formats_that_do_not_apply(run: RunFolder, tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match="JSON only"):
        export.run(parse(str(run.path), "--what", "spec", "--format", "csv", "-o", str(tmp_path / "s")))
    with pytest.raises(ParameterError, match="single HTML file"):
        export.run(parse(str(run.path), "--what", "html", "--format", "json", "-o", str(tmp_path / "h")))


def test_export_rejects_bad_output_and_unfinished_runs(run: RunFolder, tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match="does not exist"):
        export.run(parse(str(run.path), "-o", str(tmp_path / "missing" / "out.csv")))
    with pytest.raises(ParameterError, match="is a folder"):
        export.run(parse(str(run.path), "-o", str(tmp_path)))
    with pytest.raises(ParameterError, match=r"between 0\.5 and 1"):
        export.run(parse(str(run.path), "--threshold", "1.5", "-o", str(tmp_path / "x.csv")))
    unfinished = make_run(tmp_path / "runs", done=False)
    with pytest.raises(RunError, match="only once it is done"):
        export.run(parse(str(unfinished.path), "-o", str(tmp_path / "x.csv")))
    # the settings of an unfinished run can still be exported
    assert export.run(parse(str(unfinished.path), "--what", "spec", "-o", str(tmp_path / "s"))) == 0


def test_both_exports_have_the_same_columns_in_the_same_order(run: RunFolder) -> None:
    records = pd.read_csv(io.BytesIO(export.export_bytes(run, "records", "csv", 0.51)))
    risky = pd.read_csv(io.BytesIO(export.export_bytes(run, "high-risk", "csv", 0.51)))
    assert list(records.columns) == list(risky.columns)
    assert list(records.columns[:9]) == [
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
    # every record is at risk at t = 0.8 exactly when it is in the high-risk list
    at_08 = pd.read_csv(io.BytesIO(export.export_bytes(run, "records", "csv", 0.8)))
    missed = at_08.loc[at_08["missed_by_traditional"], "record_id"].tolist()
    high = high_risk(run.records(), 0.8)
    assert sorted(missed) == sorted(high.loc[high["missed_by_traditional"], "record_id"].tolist())
    assert len(missed) == 3
    assert not at_08.loc[at_08["risk_model_seeded"] <= 0.8, "missed_by_traditional"].any()


def _long_digits(table: pd.DataFrame) -> pd.DataFrame:
    out = table.copy()
    out["difference"] = [-0.16555000000000003, 1 / 3, 0.0, math.nan]
    out["risk_model_seeded"] = [2 / 3, 0.123456789, 1.0, math.nan]
    out["value:size"] = [10.123456, 1.5, -2.25, 0.0]
    return out


@pytest.fixture
def long_digits() -> pd.DataFrame:
    return _long_digits(
        pd.DataFrame({"record_id": [1, 2, 3, 4], "value:colour": ["rouge", "bleu", "vert", "=1+1"]})
    )


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_text_exports_round_risks_to_4_decimals(long_digits: pd.DataFrame, fmt: str) -> None:
    from privgame.outputs.run_report import to_bytes

    data = to_bytes(long_digits, fmt)
    text = data.decode()
    assert "-0.1656" in text and "0.16555000000000003" not in text
    assert "0.6667" in text and "0.1235" in text
    assert "10.123456" in text  # a record's own value keeps its digits
    back = pd.read_csv(io.BytesIO(data)) if fmt == "csv" else pd.DataFrame(json.loads(data))
    assert back["risk_model_seeded"].tolist()[:3] == [0.6667, 0.1235, 1.0]


def test_parquet_export_keeps_every_digit(long_digits: pd.DataFrame) -> None:
    from privgame.outputs.run_report import to_bytes

    back = pd.read_parquet(io.BytesIO(to_bytes(long_digits, "parquet")))
    assert back["difference"].iloc[0] == -0.16555000000000003


def test_csv_for_spreadsheets_has_a_bom_semicolons_and_decimal_commas(long_digits: pd.DataFrame) -> None:
    from privgame.outputs.run_report import to_bytes

    data = to_bytes(long_digits, "csv-excel")
    assert data.startswith("\ufeff".encode()) and not to_bytes(long_digits, "csv").startswith(b"\xef")
    lines = data.decode("utf-8-sig").split("\r\n")
    assert lines[0] == "record_id;value:colour;difference;risk_model_seeded;value:size"
    assert lines[1] == "1;rouge;-0,1656;0,6667;10,123456"
    assert lines[4].startswith("4;'=1+1;")  # neutralised like the plain CSV
    back = pd.read_csv(io.BytesIO(data), sep=";", decimal=",", encoding="utf-8-sig")
    plain = pd.read_csv(io.BytesIO(to_bytes(long_digits, "csv")))
    pd.testing.assert_frame_equal(back, plain)


def test_export_command_writes_csv_for_spreadsheets(run: RunFolder, tmp_path: Path) -> None:
    out = tmp_path / "records-excel.csv"
    args = parse(str(run.path), "--what", "records", "--format", "csv-excel", "-o", str(out))
    assert export.run(args) == 0
    back = pd.read_csv(out, sep=";", decimal=",", encoding="utf-8-sig")
    plain = pd.read_csv(io.BytesIO(export.export_bytes(run, "records", "csv")))
    pd.testing.assert_frame_equal(back, plain)
