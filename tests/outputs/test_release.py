"""The release: same bytes as a fresh fit on D, a card that matches, refusals, and the share estimate."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from builders import release_audit

from privgame.cli.main import main
from privgame.core import metrics
from privgame.core.errors import ParameterError, ReleaseError
from privgame.core.seeding import Role, stream
from privgame.data import BUNDLED_ADULT, decode, encode, fingerprint_table, load_dataset
from privgame.data.schema import Schema
from privgame.games.audit import share_at_risk, share_text
from privgame.games.plan import run_split
from privgame.generators import create
from privgame.outputs.release import card_path, make_release, write_release
from privgame.store.folders import RunFolder


@pytest.fixture(scope="module")
def data_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    adult = pd.read_csv(BUNDLED_ADULT, nrows=700).dropna().drop_duplicates()
    path = tmp_path_factory.mktemp("release") / "owner.csv"
    adult.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def synthpop_run(data_csv: Path, tmp_path_factory: pytest.TempPathFactory) -> RunFolder:
    return release_audit(data_csv, tmp_path_factory.mktemp("runs"), "synthpop")


def test_a_release_equals_a_fresh_fit_of_the_audited_generator_on_d(synthpop_run: RunFolder) -> None:
    release = make_release(synthpop_run, accept_risk=True)
    spec = synthpop_run.spec()
    table = synthpop_run.load_table()
    schema = Schema.from_dict(spec.schema)
    d = run_split(spec, len(table)).target
    fresh = create("synthpop").fit_sample(
        encode(table, schema)[d], schema, len(d), rng=stream(spec.seed, 0, Role.RELEASE)
    )
    expected = decode(fresh, schema).to_csv(index=False, lineterminator="\n").encode()
    assert release.csv == expected
    assert make_release(synthpop_run, accept_risk=True).csv == release.csv  # same run and seed, same bytes
    assert make_release(synthpop_run, seed=spec.seed + 1, accept_risk=True).csv != release.csv


def test_the_card_fingerprints_match_the_audited_parts(synthpop_run: RunFolder, tmp_path: Path) -> None:
    release = make_release(synthpop_run, rows=50, accept_risk=True)
    path, card_file = write_release(release, tmp_path / "synthetic.csv")
    assert card_file == card_path(path) == tmp_path / "synthetic.card.json"
    assert os.stat(path).st_mode & 0o777 == 0o600
    card = json.loads(card_file.read_text())
    spec = synthpop_run.spec()
    table = synthpop_run.load_table()
    split = run_split(spec, len(table))
    assert card["data"]["d_fingerprint"] == fingerprint_table(table.iloc[split.target].reset_index(drop=True))
    population = sorted([*split.aux.tolist(), *split.reference.tolist()])
    assert card["data"]["population_fingerprint"] == fingerprint_table(
        table.iloc[population].reset_index(drop=True)
    )
    assert card["run_id"] == synthpop_run.run_id and card["release"]["rows"] == 50
    assert card["generator"]["name"] == "synthpop" and card["audit"]["plan"]["outliers"] == 2
    assert card["audit"]["share_at_risk"]["sampled"] == 3
    assert card["release"]["file"] == "synthetic.csv"
    assert card["privgame_version"]


def test_no_holdout_row_is_ever_released(data_csv: Path, tmp_path: Path) -> None:
    # The identity generator releases its training rows verbatim: exactly D, never the holdout.
    folder = release_audit(data_csv, tmp_path, "identity")
    released = make_release(folder, accept_risk=True).table
    spec = folder.spec()
    table = folder.load_table()
    split = run_split(spec, len(table))
    names = list(released.columns)
    key = lambda frame: set(frame[names].astype(str).agg("|".join, axis=1))  # noqa: E731
    held_back = table.iloc[np.concatenate([split.aux, split.reference])]
    assert key(released) == key(table.iloc[split.target])
    assert not key(released) & key(held_back)


def test_a_changed_table_is_refused(synthpop_run: RunFolder, data_csv: Path, tmp_path: Path) -> None:
    changed = pd.read_csv(data_csv)
    changed.loc[0, "age"] = 99
    changed = changed.iloc[:-3]
    path = tmp_path / "changed.csv"
    changed.to_csv(path, index=False)
    with pytest.raises(ReleaseError, match="is not the table that was audited") as caught:
        make_release(synthpop_run, data=load_dataset(path))
    assert any("rows; the audited one had" in p for p in caught.value.problems)
    make_release(synthpop_run, data=load_dataset(data_csv), accept_risk=True)  # the audited table is fine


def test_changed_generator_settings_are_refused(synthpop_run: RunFolder) -> None:
    with pytest.raises(ReleaseError, match="generator settings differ") as caught:
        make_release(synthpop_run, generator="privbayes", generator_params={"min_samples_leaf": 10})
    assert caught.value.problems == [
        "the generator is 'privbayes'; the audit used 'synthpop'.",
        "min_samples_leaf = 10; the audit used 5.",
    ]


def test_bad_release_settings_are_refused(synthpop_run: RunFolder, tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match="--rows must be"):
        make_release(synthpop_run, rows=0)
    os.mkfifo(tmp_path / "pipe.csv")
    with pytest.raises(ParameterError, match="not a regular file"):
        write_release(make_release(synthpop_run, accept_risk=True), tmp_path / "pipe.csv")


def test_a_release_cannot_overwrite_what_it_reads_or_a_run_folder(
    synthpop_run: RunFolder, data_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import hashlib
    import shutil

    owner = tmp_path / "owner.csv"
    shutil.copy(data_csv, owner)
    before = {
        p: hashlib.sha256(p.read_bytes()).hexdigest() for p in synthpop_run.path.rglob("*") if p.is_file()
    }
    owner_sha = hashlib.sha256(owner.read_bytes()).hexdigest()
    run = str(synthpop_run.path)
    cases = [
        (["--data", str(owner), "-o", str(owner)], "which the release reads"),
        (["-o", str(synthpop_run.path / "records.csv")], "which the release reads"),
        (["-o", str(synthpop_run.path / "targets" / "x.csv")], "which the release reads"),
    ]
    for extra, message in cases:
        assert main(["release", run, *extra]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err
    # Inside another run folder (not the one released from) is refused too.
    other = synthpop_run.path.parent / "copy"
    shutil.copytree(synthpop_run.path, other)
    assert main(["release", run, "-o", str(other / "synthetic.csv")]) == 2
    assert "lies inside the run folder" in capsys.readouterr().err
    # More rows than memory allows: refused before any fit, with the most it allows.
    assert (
        main(["release", run, "-o", str(tmp_path / "big.csv"), "--rows", "10000000000", "--accept-risk"]) == 2
    )
    assert "would need more memory than this machine has" in capsys.readouterr().err
    assert not (tmp_path / "big.csv").exists()
    # Nothing the release reads was changed.
    assert hashlib.sha256(owner.read_bytes()).hexdigest() == owner_sha
    after = {
        p: hashlib.sha256(p.read_bytes()).hexdigest() for p in synthpop_run.path.rglob("*") if p.is_file()
    }
    assert after == before


def test_the_release_command(
    synthpop_run: RunFolder, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "release.csv"
    assert main(["release", str(synthpop_run.path), "-o", str(out), "--rows", "40", "--accept-risk"]) == 0
    assert len(pd.read_csv(out)) == 40 and card_path(out).exists()
    err = capsys.readouterr().err
    assert "audited against an attacker who knows a sample of" in err and "(t = 0.8)" in err
    assert main(["release", str(synthpop_run.path), "-o", str(out), "--generator", "baynet"]) == 2
    assert "the audit used 'synthpop'" in capsys.readouterr().err


def test_the_records_keep_their_audit_group(synthpop_run: RunFolder) -> None:
    records = synthpop_run.records()
    groups = set(records["audit_group"])
    assert groups <= {"outlier", "random", "outlier+random"}
    summary = synthpop_run.summary()
    assert summary["groups"]["outlier"]["records"] == 2 and summary["groups"]["random"]["records"] == 3
    assert summary["setup"]["kind"] == "release"


# --------------------------------------------------------------------------------------------
# The share estimate, by hand
# --------------------------------------------------------------------------------------------


def test_clopper_pearson_on_hand_computed_cases() -> None:
    # With no success the upper bound solves (1 - p)^n = alpha/2; with all, p^n = alpha/2.
    assert metrics.binomial_interval(0, 20) == (0.0, pytest.approx(1 - 0.025 ** (1 / 20)))
    assert metrics.binomial_interval(20, 20) == (pytest.approx(0.025 ** (1 / 20)), 1.0)
    # One of two: the bounds solve 1 - (1 - p)^2 = 0.025 and p^2 = 0.975.
    low, high = metrics.binomial_interval(1, 2)
    assert low == pytest.approx(1 - math.sqrt(0.975)) and high == pytest.approx(math.sqrt(0.975))
    with pytest.raises(ParameterError, match="successes <= trials"):
        metrics.binomial_interval(3, 2)


def _records(groups: list[str], risks: list[float], half_width: float = 0.04) -> pd.DataFrame:
    risk = np.asarray(risks)
    return pd.DataFrame(
        {
            "audit_group": groups,
            "risk_model_seeded": risk,
            "risk_model_seeded_low": risk - half_width,
            "risk_model_seeded_high": np.minimum(1.0, risk + half_width),
        }
    )


def test_the_share_uses_the_random_sample_only(synthpop_run: RunFolder) -> None:
    spec = synthpop_run.spec()
    # Sampled: 0.9 (at risk), 0.5 (not at risk), 0.6 (not at risk), 0.82 (undecided: 0.78-0.86).
    records = _records(
        ["outlier", "outlier", "random", "random", "random", "outlier+random"],
        [0.99, 0.95, 0.9, 0.5, 0.6, 0.82],
    )
    share = share_at_risk(records, spec, 0.8)
    assert share is not None
    assert (share["sampled"], share["at_risk"], share["undecided"]) == (4, 1, 1)
    assert (share["low"], share["high"]) == metrics.share_bracket(1, 2, 4)
    assert share["text"].startswith("Between 0% and 96% of the 450 records are at risk (95%)")
    assert share_at_risk(_records(["outlier"], [0.9]), spec, 0.8) is None


def test_the_share_text_of_a_census() -> None:
    low, high = metrics.share_bracket(2, 5, 40)
    share = {
        "records_in_d": 40,
        "sampled": 40,
        "at_risk": 2,
        "undecided": 3,
        "low": low,
        "high": high,
        "census": True,
        "threshold": 0.8,
    }
    assert share_text(share) == (
        f"Between 0% and {100 * high:.0f}% of the 40 records are at risk (95%): every record was "
        "audited, and 2 at risk, 3 undecided of 40 (t = 0.8; the bracket allows for the verdicts' own "
        "errors)."
    )


def test_one_answer_for_the_release(synthpop_run: RunFolder) -> None:
    from privgame.core.metrics import share_bracket
    from privgame.games.audit import answer

    spec = synthpop_run.spec()
    records = pd.DataFrame(
        {
            "audit_group": ["outlier", "outlier", "random", "random", "random", "random"],
            "risk_model_seeded": [0.95, 0.9, 0.85, 0.5, 0.6, 0.7],
            "risk_model_seeded_low": [0.85, 0.75, 0.82, 0.4, 0.5, 0.6],
            "risk_model_seeded_high": [0.99, 0.95, 0.9, 0.6, 0.7, 0.8],
            "risk_traditional_low": [0.9, 0.4, 0.3, 0.4, 0.4, 0.4],
            "risk_traditional_high": [0.99, 0.6, 0.6, 0.6, 0.6, 0.6],
        }
    )
    found = answer(records, spec, 0.8)
    assert found["counts"] == {"at risk": 2, "undecided": 1, "not at risk": 3, "attack failed": 0}
    assert found["traditional_flags"] == 1
    low, high = share_bracket(1, 1, 4)
    assert found["text"] == (
        "2 records at risk, 1 undecided, 3 not at risk of 6 audited against an attacker who knows a "
        f"sample of the population, not D (t = 0.8); between {100 * low:.0f}% and {100 * high:.0f}% "
        f"of all {spec.sizes['target']:,} records are at risk (95%). "
        "The traditional game flags 1 of these 2."
    )
    # A failed attack is named, and never counted as safe.
    failed = records.assign(risk_model_seeded_low=[0.85, 0.75, 0.82, 0.4, 0.3, 0.6])
    failed = failed.assign(risk_model_seeded_high=[0.99, 0.95, 0.9, 0.6, 0.45, 0.8])
    found = answer(failed, spec, 0.8)
    assert found["counts"] == {"at risk": 2, "undecided": 1, "not at risk": 2, "attack failed": 1}
    assert "2 not at risk, 1 where the attack failed of 6 audited" in found["text"]


def test_releasing_records_at_risk_asks_for_a_knowing_yes(
    synthpop_run: RunFolder, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    copy = RunFolder(shutil.copytree(synthpop_run.path, tmp_path / synthpop_run.run_id))
    records = copy.records()
    risk = np.full(len(records), 0.6)
    risk[:2] = 0.95  # two records whose intervals lie wholly above t = 0.8
    risk[2] = 0.81  # one whose interval contains t: undecided, not shown safe either
    records = records.assign(
        risk_model_seeded=risk, risk_model_seeded_low=risk - 0.03, risk_model_seeded_high=risk + 0.03
    )
    copy.write_results(records, copy.scores(), copy.summary())
    expected = sorted(int(r) for r in records["record_id"][:2])
    out = tmp_path / "synthetic.csv"
    assert main(["release", str(copy.path), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "3 audited records are not shown safe at t = 0.8 (2 at risk, 1 undecided)" in err
    assert f"at risk: records {expected[0]}, {expected[1]}." in err and "Nothing was written" in err
    assert "--accept-risk" in err and "remedy" in err and "extend" in err and not out.exists()
    assert main(["release", str(copy.path), "-o", str(out), "--accept-risk"]) == 0
    card = json.loads(card_path(out).read_text())
    accepted = card["audit"]["risk_accepted"]
    assert accepted == {
        "accepted": True,
        "run_id": copy.run_id,
        "not_shown_safe": {"at risk": 2, "undecided": 1, "attack failed": 0},
    }
    assert card["audit"]["at_risk_record_ids"] == expected
    # With every record shown safe no confirmation is asked, and the card says none was needed.
    assert make_release(copy, threshold=0.99).card["audit"]["risk_accepted"] is None
    # With none undecided (t = 0.7: the three are at risk), no fix for undecided records is offered.
    with pytest.raises(ReleaseError) as caught:
        make_release(copy, threshold=0.7)
    fix = next(p for p in caught.value.problems if p.startswith("fix them first"))
    assert "--leave-out at-risk " in fix and "undecided" not in fix and "extend" not in fix
