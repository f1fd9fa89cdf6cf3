"""A plug-in generator from a test module runs a whole audit, then a release, end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from privgame.cli.main import main
from privgame.data import BUNDLED_ADULT
from privgame.store.folders import RunFolder

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = "tests.generators.plugin_example:IndependentBootstrap"


@pytest.fixture
def owner_csv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # `python -m privgame` puts the current folder on the import path; the test does the same. One
    # worker (in this process): worker processes an earlier test started keep their old path.
    monkeypatch.syspath_prepend(str(ROOT))
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    path = tmp_path / "owner.csv"
    pd.read_csv(BUNDLED_ADULT, nrows=400).dropna().to_csv(path, index=False)
    return path


def test_a_plugin_audits_and_releases_end_to_end(
    owner_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "runs"
    args = ["run", "--data", str(owner_csv), "--generator", PLUGIN, "--param", "jitter=0.05"]
    args += ["--outliers", "2", "--random", "2", "--n-shadow", "8", "--n-eval", "8", "--workers", "1"]
    # A plug-in screens every record too (fresh fits: it has no refits), and its top record is confirmed.
    args += ["--screen-shadows", "40", "--confirm-top", "1"]
    assert main([*args, "--quiet", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"plug-in {PLUGIN}: follows the generator protocol" in err
    (folder,) = [RunFolder(p) for p in out.iterdir()]
    assert "plugin_independentbootstrap" in folder.run_id
    assert folder.spec().generator == PLUGIN and folder.spec().generator_params == {"jitter": 0.05}
    assert len(folder.records()) == 5 and folder.status()["state"] == "done"
    assert len(folder.screen()) == folder.spec().sizes["target"]

    release = tmp_path / "synthetic.csv"
    assert main(["release", str(folder.path), "-o", str(release), "--rows", "30", "--accept-risk"]) == 0
    table = pd.read_csv(release)
    assert len(table) == 30
    card = json.loads(release.with_name("synthetic.card.json").read_text())
    assert card["generator"]["name"] == PLUGIN and card["generator"]["params"] == {"jitter": 0.05}
    # Releasing with other plug-in settings than the audited ones is refused.
    assert main(["release", str(folder.path), "-o", str(release), "--generator", "synthpop"]) == 2


def test_a_plugin_that_breaks_the_protocol_is_stopped_before_the_run(
    owner_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "broken_plugin.py"
    broken.write_text(
        "import numpy as np\n"
        "class NoSample:\n"
        "    def __init__(self):\n        pass\n"
        "    def fit(self, X, schema, *, rng):\n        return self\n"
    )
    pytest.MonkeyPatch().syspath_prepend(str(tmp_path))
    code = main(
        ["run", "--data", str(owner_csv), "--generator", "broken_plugin:NoSample", "--out", str(tmp_path)]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "sample" in err
    assert not any(p.is_dir() and p.name != "__pycache__" for p in tmp_path.iterdir() if p.name != "runs")


def test_a_plugin_audits_from_python_with_its_parameters_as_keywords(
    owner_csv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import privgame
    import privgame.generators as generators

    checked: list[str] = []
    real = generators.check_contract
    monkeypatch.setattr(generators, "check_contract", lambda *a, **k: checked.append("yes") or real(*a, **k))
    audit = privgame.audit(
        owner_csv, PLUGIN, jitter=0.05, outliers=1, random=1, n_shadow=8, n_eval=8, screen="none",
        workers=1, runs=tmp_path / "runs", progress=False,
    )  # fmt: skip
    assert checked, "a plug-in is checked against the generator protocol first, as `privgame run` does"
    assert audit.spec.generator == PLUGIN and audit.spec.generator_params == {"jitter": 0.05}
    assert audit.state == "done" and len(audit.records()) == 2


def test_the_checks_before_a_run_are_one_step_for_both_faces(owner_csv: Path) -> None:
    """`privgame run` and `privgame.audit` call the same check_launch: a plug-in is checked against
    the protocol and timed once, and its cost estimated from that timing; a built-in generator is
    timed by the cost check alone."""
    from privgame.service import AuditRequest, check_launch, prepare_request

    sizes = {"outliers": 1, "random": 1, "n_shadow": 8, "n_eval": 8, "screen": "none"}
    plugin = prepare_request(
        AuditRequest(data=str(owner_csv), generator=PLUGIN, generator_params={"jitter": 0.05}, **sizes)
    )
    launch = check_launch(plugin.spec, plugin.inputs.table, workers=1)
    assert launch.plugin is not None and launch.plugin.rows > 0
    assert launch.calibration is not None and launch.cost.calibration is launch.calibration
    assert launch.estimate is not None and launch.estimate > 0 and not launch.cost.over

    builtin = prepare_request(AuditRequest(data=str(owner_csv), generator="baynet", **sizes))
    launch = check_launch(builtin.spec, builtin.inputs.table, workers=1)
    assert launch.plugin is None and launch.calibration is None
    assert launch.cost.calibration is not None and launch.estimate is not None
