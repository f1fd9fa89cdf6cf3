"""anonymeter's three risks of a run's release (privgame.analysis.anonymity): a release that copies
D is found to single out, link and infer; one that ignores D is not; the figures are stored, read
back, shown, and (but for the univariate singling out, see the module) reproducible."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from privgame.analysis import anonymity
from privgame.analysis.anonymity import AnonymityReport, anonymity_lines, measure_anonymity, stored_anonymity
from privgame.cli.main import main
from privgame.core.errors import ParameterError
from privgame.data import BUNDLED_ADULT
from privgame.store.folders import RunFolder


@pytest.fixture(scope="module")
def adult(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("data") / "adult1200.csv"
    pd.read_csv(BUNDLED_ADULT, nrows=1200).dropna().to_csv(data, index=False)
    return data


def _run(adult: Path, root: Path, generator: str) -> RunFolder:
    args = ["run", "--data", str(adult), "--generator", generator, "--holdout", "0.5", "--screen", "none"]
    args += ["--outliers", "1", "--random", "1", "--n-shadow", "4", "--n-eval", "4", "--workers", "1"]
    args += ["--secret", "income", "--out", str(root), "--quiet"]
    assert main(args) == 0
    (folder,) = [RunFolder(p) for p in root.iterdir() if p.is_dir()]
    return folder


@pytest.fixture(scope="module")
def copied(adult: Path, tmp_path_factory: pytest.TempPathFactory) -> RunFolder:
    return _run(adult, tmp_path_factory.mktemp("identity"), "identity")


@pytest.fixture(scope="module")
def independent(adult: Path, tmp_path_factory: pytest.TempPathFactory) -> RunFolder:
    return _run(adult, tmp_path_factory.mktemp("marginals"), "marginals")


def test_a_release_that_copies_d_singles_out_links_and_infers(copied: RunFolder) -> None:
    report = measure_anonymity(copied, n_attacks=200)
    assert report.singling_out.low > 0.5
    assert report.linkability.low > 0.5
    assert report.inference["income"].value > 0.1  # the run's secret is inferred by default
    assert report.n_attacks == 200 and report.control_rows > 200
    assert stored_anonymity(copied) == report


def test_a_release_of_independent_columns_links_and_infers_nothing_but_singles_out_by_its_values(
    independent: RunFolder,
) -> None:
    report = measure_anonymity(independent, n_attacks=200)
    # Each column drawn on its own breaks every link between columns...
    assert report.linkability.low == 0.0
    assert report.inference["income"].low == 0.0
    # ... but the marginals generator draws D's own values: a weight that appears once in the
    # release is a weight of one record of D and of no stranger, and singles that record out.
    assert report.singling_out.low > 0.5
    # Where an attack did no better than anonymeter's random guess, the report says so.
    assert any("no better than a random guess" in note for note in report.notes)


def test_linkability_and_inference_are_the_same_when_measured_again(independent: RunFolder) -> None:
    first = measure_anonymity(independent, n_attacks=150, secrets=["income", "race"])
    second = measure_anonymity(independent, n_attacks=150, secrets=["income", "race"])
    assert first.linkability == second.linkability
    assert first.inference == second.inference
    assert first.singling_out_multivariate == second.singling_out_multivariate


def test_the_figures_reach_the_report_and_read_back_from_json(copied: RunFolder, capsys) -> None:
    report = measure_anonymity(copied, n_attacks=100)
    assert AnonymityReport.from_dict(report.to_dict()) == report
    lines = anonymity_lines(report)
    assert lines[0].startswith("singling out:") and any(line.startswith("linkability:") for line in lines)
    assert main(["report", str(copied.path)]) == 0
    assert "three risks         singling out:" in capsys.readouterr().out
    assert main(["anonymity", str(copied.path), "--attacks", "100", "--json"]) == 0
    assert '"linkability"' in capsys.readouterr().out


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"n_attacks": 5}, "--attacks must be a whole number"), ({"secrets": ["salary"]}, "not columns")],
)
def test_bad_settings_are_refused_by_name(independent: RunFolder, kwargs: dict, message: str) -> None:
    with pytest.raises(ParameterError, match=message):
        measure_anonymity(independent, **kwargs)


def test_without_anonymeter_the_error_says_how_to_install_it(
    independent: RunFolder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(anonymity, "anonymeter_available", lambda: False)
    with pytest.raises(ParameterError, match=r"requirements-anonymeter\.txt"):
        measure_anonymity(independent)
