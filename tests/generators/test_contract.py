"""One contract, run over every registered generator."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from privgame.core.errors import ParameterError
from privgame.core.seeding import stream
from privgame.data import BUNDLED_ADULT, decode, encode, load_dataset
from privgame.data.schema import Schema
from privgame.generators import GENERATORS, SyntheticGenerator, available, create


@pytest.fixture(scope="module")
def adult() -> tuple[np.ndarray, Schema, pd.DataFrame]:
    dataset = load_dataset(BUNDLED_ADULT)
    table = dataset.table.iloc[:600].reset_index(drop=True)
    return encode(table, dataset.schema), dataset.schema, table


def test_the_registry_holds_the_documented_generators() -> None:
    assert available() == ["synthpop", "baynet", "privbayes", "mst", "marginals", "identity"]
    assert [name for name, cls in GENERATORS.items() if cls.leaks_training_data] == ["identity"]
    assert "tests only" in GENERATORS["identity"].label
    with pytest.raises(ParameterError, match="Unknown generator 'gan'; choose one of synthpop"):
        create("gan")
    with pytest.raises(ParameterError, match="Bad parameters for generator 'synthpop'"):
        create("synthpop", epsilon=1)


@pytest.mark.parametrize("name", available())
@pytest.mark.parametrize("n", [1, 250, 1200])
def test_every_generator_keeps_columns_dtypes_sizes_and_domain(
    adult: tuple[np.ndarray, Schema, pd.DataFrame], name: str, n: int
) -> None:
    X, schema, table = adult
    generator = create(name)
    assert isinstance(generator, SyntheticGenerator) and generator.name == name
    assert not hasattr(generator, "schema_"), "constructors store hyper-parameters only"
    synthetic = generator.fit_sample(X, schema, n, rng=stream(5, 1))
    assert synthetic.shape == (n, X.shape[1]) and synthetic.dtype == np.float64
    for j, column in enumerate(schema.used):
        values = synthetic[:, j]
        if column.role == "categorical":
            assert np.array_equal(values, np.round(values))
            assert values.min() >= 0 and values.max() < len(column.categories or ())
        else:
            assert values.min() >= column.lower and values.max() <= column.upper
    decoded = decode(synthetic, schema)
    assert list(decoded.columns) == list(table[schema.names].columns)
    for column in schema.names:
        assert decoded[column].dtype.kind == table[column].dtype.kind, column


@pytest.mark.parametrize("name", available())
def test_every_generator_is_reproducible_from_its_seed(
    adult: tuple[np.ndarray, Schema, pd.DataFrame], name: str
) -> None:
    X, schema, _ = adult
    first = create(name).fit_sample(X, schema, 300, rng=stream(9, 0))
    again = create(name).fit_sample(X, schema, 300, rng=stream(9, 0))
    other = create(name).fit_sample(X, schema, 300, rng=stream(9, 1))
    assert np.array_equal(first, again)
    assert not np.array_equal(first, other)


@pytest.mark.parametrize("name", available())
def test_sampling_before_fitting_is_a_clear_error(name: str) -> None:
    with pytest.raises(ParameterError, match="must be fitted"):
        create(name).sample(3, rng=stream(0))


@pytest.mark.parametrize("name", available())
def test_every_generator_declares_its_parameters_once_with_its_constructors_defaults(
    adult: tuple[np.ndarray, Schema, pd.DataFrame], name: str
) -> None:
    """The generator's ``parameters`` are the declarations the faces read
    (:data:`privgame.core.options.GENERATOR_OPTIONS`), each a constructor keyword whose default is
    the declared one, and ``fit`` refuses a value out of its range with the declaration's message."""
    import inspect

    from privgame.core.options import GENERATOR_OPTIONS

    cls = GENERATORS[name]
    assert cls.parameters == GENERATOR_OPTIONS[name]
    signature = inspect.signature(cls.__init__).parameters
    for option in cls.parameters:
        assert signature[option.name].default == option.default, option.name
        bad = "neither" if option.kind == "choice" else (0 if option.kind == "epsilon" else -1)
        X, schema, _ = adult
        with pytest.raises(ParameterError) as caught:
            create(name, **{option.name: bad}).fit(X[:50], schema, rng=stream(5, 1))
        assert caught.value.summary == option.problem(bad)
