"""The audited release's similarity checks, measured at the end of a run and read at any t."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from builders import release_audit

from privgame.cli.main import main
from privgame.core.seeding import Role, stream
from privgame.data import BUNDLED_ADULT
from privgame.data.encoding import encode
from privgame.data.schema import Schema
from privgame.data.similarity import GowerEncoding, record_similarity
from privgame.games.audit import record_similarity_text, run_summary, similarity_answer
from privgame.games.closeness import MAX_HOLDOUT_ROWS, holdout_rows
from privgame.games.plan import run_split
from privgame.generators import create
from privgame.outputs.release import make_release
from privgame.settings.run_spec import AttackSettings
from privgame.store.folders import RunFolder


@pytest.fixture(scope="module")
def data_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    adult = pd.read_csv(BUNDLED_ADULT, nrows=700).dropna().drop_duplicates()
    path = tmp_path_factory.mktemp("closeness") / "owner.csv"
    adult.to_csv(path, index=False)
    return path


def _audit(data_csv: Path, root: Path, generator: str) -> RunFolder:
    return release_audit(
        data_csv,
        root,
        generator,
        attack=AttackSettings(n_shadow=8, n_eval=8, attacker="leave-one-out", games="model-seeded"),
    )


@pytest.fixture(scope="module")
def identity_run(data_csv: Path, tmp_path_factory: pytest.TempPathFactory) -> RunFolder:
    return _audit(data_csv, tmp_path_factory.mktemp("runs"), "identity")


@pytest.fixture(scope="module")
def synthpop_run(data_csv: Path, tmp_path_factory: pytest.TempPathFactory) -> RunFolder:
    return _audit(data_csv, tmp_path_factory.mktemp("runs"), "synthpop")


def test_a_release_that_copies_d_has_every_record_at_distance_zero_and_fails_the_share_test(
    identity_run: RunFolder,
) -> None:
    records = identity_run.records()
    assert (records["dcr"] == 0).all()
    holdout = identity_run.summary()["similarity"]["holdout_rows"]
    assert np.allclose(records["dcr_p_value"], records["dcr_p_value"].min())
    assert records["dcr_p_value"].max() <= 1 / (1 + holdout) + 1e-12 or records["dcr_p_value"].max() < 0.05
    summary = run_summary(identity_run)
    similarity = summary["similarity"]
    assert similarity["table"]["passes"] is False
    assert similarity["close"] == len(records)
    assert "The similarity test fails" in similarity["text"]


def test_the_figures_are_the_ones_of_the_release_privgame_would_ship(synthpop_run: RunFolder) -> None:
    spec = synthpop_run.spec()
    table = synthpop_run.load_table()
    schema = Schema.from_dict(spec.schema)
    X = encode(table, schema)
    d = run_split(spec, len(table)).target
    release = make_release(synthpop_run, accept_risk=True)
    synthetic = encode(release.table, schema)
    holdout = holdout_rows(spec, len(table), d)
    encoding = GowerEncoding.for_arrays(np.asarray(schema.is_categorical), X[d], X[holdout], synthetic)
    records = synthpop_run.records()
    expected = record_similarity(X[records["record_id"].to_numpy()], X[holdout], synthetic, encoding)
    assert np.allclose(records["dcr"], expected.dcr)
    assert np.allclose(records["dcr_p_value"], expected.p_value)
    # The holdout is every record outside D here (fewer than the cap), never a record of D.
    assert len(holdout) == len(table) - len(d) < MAX_HOLDOUT_ROWS
    assert not set(holdout) & set(d)
    fresh = create("synthpop").fit_sample(X[d], schema, len(d), rng=stream(spec.seed, 0, Role.RELEASE))
    assert np.array_equal(fresh, synthetic)


def test_the_sentence_follows_t_and_names_the_records_the_test_cannot_see(synthpop_run: RunFolder) -> None:
    records = synthpop_run.records()
    stored = synthpop_run.summary()["similarity"]
    low = similarity_answer(
        records.assign(risk_model_seeded_low=0.9, risk_model_seeded_high=1.0),
        stored,
        synthpop_run.spec(),
        0.6,
    )
    assert low is not None
    assert low["at_risk"] == len(records)
    unseen = int((records["dcr_p_value"] > stored["alpha"]).sum())
    assert low["at_risk_not_close"] == unseen
    assert f"while {len(records)} of the {len(records)} audited records are at risk" in low["text"]
    none = similarity_answer(
        records.assign(risk_model_seeded_low=0.5, risk_model_seeded_high=0.55),
        stored,
        synthpop_run.spec(),
        0.6,
    )
    assert none is not None and "finds no audited record at risk" in none["text"]
    assert similarity_answer(records, None, synthpop_run.spec(), 0.6) is None
    # A record of D found whole in the release: the test never reads "passes" beside it.
    passing = {**stored, "table": {**stored["table"], "passes": True}}
    copied = similarity_answer(
        records.assign(dcr=[0.0] + [0.1] * (len(records) - 1)), passing, synthpop_run.spec(), 0.6
    )
    assert copied is not None and copied["copies"] == 1
    assert (
        copied["text"].startswith("The similarity test fails")
        and "1 audited records appear" in copied["text"]
    )
    clean = similarity_answer(records.assign(dcr=0.1), passing, synthpop_run.spec(), 0.6)
    assert clean is not None and clean["text"].startswith("The similarity test passes")


def test_the_figures_are_stored_once_and_reused(
    synthpop_run: RunFolder, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored = synthpop_run.read_similarity()
    assert stored is not None and stored["seed"] == synthpop_run.spec().seed
    from privgame.games import closeness

    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("measured again")

    monkeypatch.setattr(closeness, "measure_similarity", fail)
    spec = synthpop_run.spec()
    table = synthpop_run.load_table()
    X = encode(table, Schema.from_dict(spec.schema))
    d = run_split(spec, len(table)).target
    again = closeness.similarity_of(
        synthpop_run,
        X,
        Schema.from_dict(spec.schema),
        spec,
        d,
        synthpop_run.records()["record_id"].to_numpy(),
    )
    assert again == stored


def test_a_release_that_cannot_be_sampled_keeps_the_audit_and_says_why(
    synthpop_run: RunFolder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from privgame.games import closeness, engine

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("no memory left")

    monkeypatch.setattr(engine, "similarity_of", broken)
    ctx = SimpleNamespace(X=None, schema=None, target=None)
    figures = engine._similarity(synthpop_run, ctx, synthpop_run.spec(), np.array([1]))  # type: ignore[arg-type]
    assert figures["table"] is None and "no memory left" in figures["error"]
    answer = similarity_answer(synthpop_run.records(), figures, synthpop_run.spec(), 0.6)
    assert answer is not None and "could not be run (RuntimeError: no memory left)" in answer["text"]
    assert closeness.SIMILARITY_ALPHA == 0.05


def test_report_card_and_html_say_it(
    synthpop_run: RunFolder, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(synthpop_run.path)]) == 0
    out = capsys.readouterr().out
    assert "similarity test     The similarity test" in out
    assert main(["export", str(synthpop_run.path), "--what", "html", "-o", str(tmp_path / "r.html")]) == 0
    html = (tmp_path / "r.html").read_text()
    assert "<strong>Similarity checks.</strong>" in html and "chart-similarity" in html
    out_csv = tmp_path / "synthetic.csv"
    assert main(["release", str(synthpop_run.path), "-o", str(out_csv), "--accept-risk"]) == 0
    card = json.loads((tmp_path / "synthetic.card.json").read_text())
    similarity = card["audit"]["similarity"]
    assert similarity["measured_on_this_release"] is True
    assert similarity["text"].startswith("The similarity test")
    assert (
        main(
            [
                "release",
                str(synthpop_run.path),
                "-o",
                str(tmp_path / "other.csv"),
                "--seed",
                "99",
                "--accept-risk",
            ]
        )
        == 0
    )
    other = json.loads((tmp_path / "other.card.json").read_text())["audit"]["similarity"]
    assert other["measured_on_this_release"] is False and "not on this one" in other["text"]


def test_a_record_sentence_reads_its_figures() -> None:
    seen = record_similarity_text(0.0, 0.001, "at risk")
    assert seen is not None and "flags this record too" in seen
    unseen = record_similarity_text(0.2, 0.4, "at risk")
    assert unseen is not None and "does not see this record, while the attack finds it at risk" in unseen
    assert "although the attack's verdict is not at risk" in str(
        record_similarity_text(0.0, 0.01, "not at risk")
    )
    assert record_similarity_text(float("nan"), 0.5, "at risk") is None


def test_the_chart_plots_each_record_and_counts_the_ones_the_test_cannot_see(synthpop_run: RunFolder) -> None:
    from privgame.games.audit import records_at
    from privgame.outputs.figures import similarity_chart

    records = records_at(synthpop_run.records(), 0.6).assign(
        risk_model_seeded_low=[0.9, 0.9, 0.1, 0.1, 0.1], risk_model_seeded_high=[1.0, 1.0, 0.55, 0.55, 0.55]
    )
    records = records_at(records, 0.6)
    records.loc[records.index[0], "dcr_p_value"] = 0.01
    records.loc[records.index[1], "dcr_p_value"] = 0.5
    chart = similarity_chart(records, 0.6)
    assert len(chart.data) == len(records)
    assert sorted(int(p[0]) for trace in chart.figure.data for p in trace.customdata) == sorted(
        records["record_id"].tolist()
    )
    assert "1 of the 2 records at risk sit in the shaded area" in chart.caption
    none = similarity_chart(records.assign(verdict_model_seeded="not at risk"), 0.6)
    assert "no record is at risk at t=0.6" in none.caption
