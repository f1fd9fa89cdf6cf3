"""Fixtures shared by the tests of the games."""

from __future__ import annotations
