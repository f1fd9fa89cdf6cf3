"""The screen's settings in a run spec: defaults by set-up, validation, and JSON that old specs
still read."""

from __future__ import annotations

import json

import pytest
from builders import bare_spec

from privgame.core.errors import ParameterError
from privgame.settings.run_spec import RunSpec, ScreenSettings


def test_the_release_set_up_screens_by_default_and_the_paper_set_up_does_not() -> None:
    assert ScreenSettings.for_setup("release").on
    assert not ScreenSettings.for_setup("paper").on
    assert ScreenSettings.for_setup("paper", "all", confirm_top=3).confirm_top == 3
    assert ScreenSettings.for_setup("release", None, shadows=None).shadows == ScreenSettings.shadows


def test_a_spec_without_the_screen_writes_it_not_and_one_with_it_round_trips() -> None:
    plain = bare_spec()
    assert "screen" not in json.loads(plain.to_json())  # the specs of existing runs read as before
    assert RunSpec.from_json(plain.to_json()).screen == ScreenSettings()
    screened = bare_spec(screen=ScreenSettings(mode="all", shadows=120, swap=0.25, confirm_top=4))
    assert json.loads(screened.to_json())["screen"]["shadows"] == 120
    assert RunSpec.from_json(screened.to_json()) == screened


def test_every_bad_screen_setting_is_named_at_once() -> None:
    spec = bare_spec(screen=ScreenSettings(mode="some", shadows=5, swap=0.9, confirm_top=-1))
    with pytest.raises(ParameterError, match="not valid") as caught:
        spec.validate()
    text = str(caught.value) + " ".join(getattr(caught.value, "problems", []))
    for name in ("--screen 'some'", "--screen-shadows", "the screen's swap", "--confirm-top"):
        assert name in text
