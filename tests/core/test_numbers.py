"""One rule for writing a figure, on every face."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privgame.core.numbers import UNDEFINED, number_text


@pytest.mark.parametrize(
    ("value", "digits", "text"),
    [
        (None, 3, UNDEFINED),
        (math.nan, 3, UNDEFINED),
        (np.float64("nan"), 2, UNDEFINED),
        (np.float32("nan"), 3, UNDEFINED),
        (0.12345, 3, "0.123"),
        (np.float32(0.5), 2, "0.50"),
        (1.0, 0, "1"),
        (math.inf, 3, "inf"),
        (7, 3, "7"),
        (np.int64(12), 3, "12"),
        (True, 3, "yes"),
        (np.bool_(False), 3, "no"),
        ("not run", 3, "not run"),
    ],
)
def test_a_figure_reads_the_same_on_every_face(value: object, digits: int, text: str) -> None:
    assert number_text(value, digits) == text
