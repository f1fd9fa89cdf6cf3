"""``--attacks``: the portfolio of a run, from what a user writes to registry names that apply."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from privgame.core.defaults import DEFAULT_ATTACKS
from privgame.core.errors import ParameterError

__all__ = ["attack_words", "resolve_attacks"]


def resolve_attacks(
    setting: str | Sequence[str] | None,
    *,
    setup: str,
    generator: str,
    params: Mapping[str, Any] | None = None,
) -> tuple[str, ...]:
    """The attacks a run uses.

    Parameters
    ----------
    setting : str, sequence of str or None
        As written: ``"all"``, ``"tapas,closest"``, a list of names, or None for the set-up's
        default (:data:`~privgame.core.defaults.DEFAULT_ATTACKS`).
    setup : {"release", "paper"}
    generator : str
        The generator's registry name, with its ``params``.

    Returns
    -------
    tuple of str
        Registry names in the registry's order. ``"all"`` keeps the attacks that apply to the
        generator (the marginal attack only to generators built from marginals).

    Raises
    ------
    ParameterError
        For an unknown name, or a named attack that does not apply to the generator.
    """
    from privgame.attack import applicable, parse_attacks
    from privgame.generators import create

    text = setting if setting is not None else DEFAULT_ATTACKS.get(setup, "tapas")
    names = parse_attacks(text)
    model = create(generator, **dict(params or {}))
    usable = applicable(names, model)
    everything = isinstance(text, str) and text.strip() == "all"
    refused = [name for name in names if name not in usable]
    if refused and not everything:
        raise ParameterError(
            f"--attacks: {', '.join(refused)} cannot attack the {generator} generator (the marginal "
            "attack needs a generator built from marginals, such as baynet or privbayes); leave it "
            "out, or use --attacks all to take every attack that applies."
        )
    return usable


def attack_words() -> dict[str, tuple[str, str]]:
    """Each registered attack's title and one-sentence description, in the portfolio's order."""
    from privgame.attack import ATTACKS, attack_names

    return {name: (ATTACKS[name].title, ATTACKS[name].description) for name in attack_names()}
