"""The public domain of a table: categories and bounds known without looking at the private rows.

PrivBayes' differential-privacy guarantee covers the rows only when every used column's domain
(a categorical column's categories, a continuous column's lower and upper bounds) is public
knowledge. By default the schema reads the domain off the data; a user declares it instead with
a JSON text such as::

    {"bounds": {"age": [17, 90]}, "categories": {"race": ["Black", "White", "Other"]}}

:func:`parse_domain` reads that text, :func:`declare_domain` puts it into a dataset's schema
(marking those columns ``domain_public``), and :func:`domain_template` writes the data's current
domain in the same format for the user to edit. The template is read off the data, so it is not
public knowledge until the user has replaced what it says with what is publicly known.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from numbers import Real
from typing import Any

from privgame.core.errors import ParameterError, SchemaError
from privgame.core.jsonlimits import check_limits
from privgame.data.dataset import Dataset
from privgame.data.encoding import encode
from privgame.data.schema import CATEGORICAL, CONTINUOUS, EXCLUDED, Schema

__all__ = ["Domain", "declare_domain", "domain_template", "parse_domain"]

_KEYS = ("bounds", "categories")
MAX_DOMAIN_BYTES = 32 * 1024 * 1024
"""The largest domain text accepted (32 MiB: a thousand columns of many categories each)."""
MAX_DOMAIN_DEPTH = 8
"""The deepest nesting accepted; a valid domain nests 3 levels (object, column, list)."""
_EXAMPLE = '{"bounds": {"age": [17, 90]}, "categories": {"race": ["A", "B"]}}'


@dataclass(frozen=True)
class Domain:
    """A declared (public) domain for some columns of a table.

    Attributes
    ----------
    categories : dict of str to tuple
        Categorical column name to its full list of categories, in the order given.
    bounds : dict of str to (float, float)
        Continuous column name to ``(lower, upper)``, finite with ``lower < upper``.
    """

    categories: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    bounds: dict[str, tuple[float, float]] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        """Every column the domain declares, bounds first, each in the order given."""
        return [*self.bounds, *self.categories]


def _is_number(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def _parse_bounds(data: Any, problems: list[str]) -> dict[str, tuple[float, float]]:
    if not isinstance(data, dict):
        problems.append(
            '"bounds" must be an object of column name to [lower, upper], e.g. {"age": [17, 90]}.'
        )
        return {}
    bounds: dict[str, tuple[float, float]] = {}
    for name, pair in data.items():
        if not (isinstance(pair, list) and len(pair) == 2 and all(_is_number(v) for v in pair)):
            problems.append(
                f"bounds of column {name!r}: must be a pair of numbers [lower, upper], got "
                f"{json.dumps(pair)}."
            )
            continue
        lower, upper = float(pair[0]), float(pair[1])
        if not (math.isfinite(lower) and math.isfinite(upper)):
            problems.append(f"bounds of column {name!r}: must be finite numbers, got [{lower}, {upper}].")
        elif not lower < upper:
            problems.append(
                f"bounds of column {name!r}: the lower bound must be below the upper one, "
                f"got [{pair[0]}, {pair[1]}]."
            )
        else:
            bounds[name] = (lower, upper)
    return bounds


def _parse_categories(data: Any, problems: list[str]) -> dict[str, tuple[Any, ...]]:
    if not isinstance(data, dict):
        problems.append(
            '"categories" must be an object of column name to a list of categories, '
            'e.g. {"race": ["A", "B"]}.'
        )
        return {}
    categories: dict[str, tuple[Any, ...]] = {}
    for name, values in data.items():
        if not isinstance(values, list) or not values:
            problems.append(
                f'categories of column {name!r}: must be a non-empty list such as ["A", "B"], '
                f"got {json.dumps(values)}."
            )
            continue
        bad = [v for v in values if not isinstance(v, str | bool | int | float)]
        if bad:
            problems.append(
                f"categories of column {name!r}: each category must be a string, number or "
                f"boolean, not {json.dumps(bad[0])}."
            )
            continue
        categories[name] = tuple(values)
    return categories


def parse_domain(text: str | bytes) -> Domain:
    """Read a domain from its JSON text.

    Parameters
    ----------
    text : str or bytes
        A JSON object with ``"bounds"`` (column name to ``[lower, upper]``) and/or
        ``"categories"`` (column name to a list of categories), and no other key.

    Returns
    -------
    Domain

    Raises
    ------
    ParameterError
        For a text over :data:`MAX_DOMAIN_BYTES` or nested deeper than :data:`MAX_DOMAIN_DEPTH`
        (checked before it is parsed), or listing every problem: not UTF-8, not JSON, not an
        object, an unknown key, bounds that are not a pair of finite numbers with lower < upper,
        categories that are not a non-empty list of strings, numbers or booleans, a column given
        both.
    """
    if len(text) > MAX_DOMAIN_BYTES:
        raise ParameterError(
            f"The domain is {len(text):,} bytes long, over the limit of {MAX_DOMAIN_BYTES:,}; declare "
            "the domain of fewer columns, or fewer categories."
        )
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ParameterError(
                f"The domain is not UTF-8 text (byte {exc.start}); save it as UTF-8 JSON."
            ) from None
    check_limits(text, what="The domain", max_chars=MAX_DOMAIN_BYTES, max_depth=MAX_DOMAIN_DEPTH)
    try:
        data = json.loads(text)
    except ValueError as exc:
        detail = (
            f"line {exc.lineno}, column {exc.colno}: {exc.msg}"
            if isinstance(exc, json.JSONDecodeError)
            else exc
        )
        raise ParameterError(f"The domain is not valid JSON ({detail}); fix it, e.g. {_EXAMPLE}.") from None
    if not isinstance(data, dict):
        raise ParameterError(
            f'The domain must be a JSON object with "bounds" and/or "categories", e.g. {_EXAMPLE}.'
        )
    problems: list[str] = []
    unknown = [key for key in data if key not in _KEYS]
    if unknown:
        problems.append(
            f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}: only "
            '"bounds" and "categories" are allowed; remove the others.'
        )
    bounds = _parse_bounds(data.get("bounds", {}), problems)
    categories = _parse_categories(data.get("categories", {}), problems)
    for name in bounds.keys() & categories.keys():
        problems.append(
            f"column {name!r} has both bounds and categories; keep bounds for a continuous column, "
            "categories for a categorical one."
        )
    if problems:
        raise ParameterError("The domain cannot be used.", problems)
    return Domain(categories=categories, bounds=bounds)


def _like_inferred(values: tuple[Any, ...], inferred: tuple[Any, ...] | None) -> tuple[Any, ...]:
    """Declared categories in the type of the data's own, so output keeps the column's dtype.

    JSON writes 3 and 3.0 alike, and a user may quote numbers; a column of whole-number codes
    should still decode to integers.
    """
    if not inferred or any(isinstance(c, bool) for c in inferred):
        return values
    if all(isinstance(c, int) for c in inferred):
        kind: type = int
    elif all(isinstance(c, float) for c in inferred):
        kind = float
    else:
        return values
    out = []
    for value in values:
        try:
            number = float(value)
        except (TypeError, ValueError):
            return values
        if isinstance(value, bool) or not math.isfinite(number) or (kind is int and not number.is_integer()):
            return values
        out.append(kind(number))
    return tuple(out)


def declare_domain(dataset: Dataset, domain: Domain) -> Dataset:
    """The dataset with ``domain`` declared (public) in its schema.

    Columns the domain does not name keep the domain read off the data. A categorical column's
    declared categories must hold every value of the table; a continuous column's declared
    bounds need not: values outside them are allowed, and the generators that bin by the bounds
    (Baynet, PrivBayes) clip them to the nearest bound.

    Parameters
    ----------
    dataset : Dataset
        A prepared dataset (see :func:`~privgame.data.load_dataset`).
    domain : Domain
        The public domain, usually from :func:`parse_domain`.

    Returns
    -------
    Dataset
        The same table and fingerprint; the schema's named columns have ``domain_public`` set.

    Raises
    ------
    SchemaError
        Listing every column the domain names that is not in the table, is excluded, or has the
        other role; or every column with values outside its declared categories.
    """
    schema = dataset.schema
    by_name = {c.name: c for c in schema.columns}
    problems: list[str] = []
    wanted = [(name, CATEGORICAL, "categories") for name in domain.categories]
    wanted += [(name, CONTINUOUS, "bounds") for name in domain.bounds]
    for name, role, what in wanted:
        col = by_name.get(name)
        if col is None:
            problems.append(
                f"column {name!r}: not a column of {dataset.source_name}; check the spelling "
                f"(the columns are {[c.name for c in schema.columns]}) or remove it."
            )
        elif col.role == EXCLUDED:
            problems.append(
                f"column {name!r} is excluded, so it needs no domain; remove its {what} or change its role."
            )
        elif col.role != role:
            fix = "its bounds [lower, upper]" if col.role == CONTINUOUS else "its list of categories"
            problems.append(f"column {name!r} is {col.role}: declare {fix} instead of {what}.")
    if problems:
        raise SchemaError("The declared domain does not fit the columns.", problems)
    categories = {
        name: _like_inferred(values, by_name[name].categories) for name, values in domain.categories.items()
    }
    declared = schema.with_domain(categories=categories, bounds=domain.bounds)
    try:
        encode(dataset.table, declared)
    except SchemaError as error:
        raise SchemaError(
            "Some values of the table lie outside the declared categories.", error.problems
        ) from None
    return replace(dataset, schema=declared)


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() and abs(value) < 2**53 else float(value)


def _json_value(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def domain_template(schema: Schema) -> str:
    """The schema's current domain as JSON text in the format :func:`parse_domain` reads.

    Every used column is listed: continuous ones under ``"bounds"``, categorical ones under
    ``"categories"``. Where the domain was read off the data (``domain_public`` False) the
    template repeats what the private rows show, so it is a starting point for the user to
    replace with public knowledge, not a public domain.

    Parameters
    ----------
    schema : Schema
        The schema whose domain to write.

    Returns
    -------
    str
        JSON text, one column per line.
    """
    bounds: dict[str, list[int | float]] = {}
    categories: dict[str, list[Any]] = {}
    for col in schema.used:
        if col.role == CONTINUOUS and col.lower is not None and col.upper is not None:
            bounds[col.name] = [_number(col.lower), _number(col.upper)]
        elif col.role == CATEGORICAL and col.categories:
            categories[col.name] = [_json_value(c) for c in col.categories]
    return _format({"bounds": bounds, "categories": categories})


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def _format(sections: Mapping[str, Mapping[str, list[Any]]]) -> str:
    """Indented JSON with each column's list on one line (readable for long category lists)."""
    parts = []
    for key, entries in sections.items():
        if not entries:
            parts.append(f"  {json.dumps(key)}: {{}}")
            continue
        lines = [f"    {_dumps(name)}: {_dumps(values)}" for name, values in entries.items()]
        parts.append(f"  {json.dumps(key)}: {{\n" + ",\n".join(lines) + "\n  }")
    return "{\n" + ",\n".join(parts) + "\n}\n"
