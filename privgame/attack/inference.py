"""Attribute inference: predict a record's secret column from a synthetic table and its other columns.

The attacker knows every column of the target but one, the *secret*, and the synthetic table.
Four attacks, the first three vectorised over many targets at once:

``nearest``
    The synthetic rows closest to the target on its known columns (categorical columns count a
    mismatch as 1, continuous ones their absolute difference over the column's range), every row
    at the smallest distance; the secret predicted is the most frequent among them. This finds a
    record that the release copies or nearly copies (memorisation).
``bayes``
    A naive Bayes classifier trained on the synthetic table (continuous columns in ten
    equal-count bins of the attacker's reference data): the secret the release's statistics make
    likeliest. This is what a release reveals about a record through the population's
    correlations. Each likelihood is an m-estimate, ``(count(v, c) + M q_v) / (N_c + M)`` with
    ``q_v`` the value's share of the release and ``M`` = :data:`BAYES_PRIOR_WEIGHT`: with add-one
    smoothing a single synthetic row holding a rare value decides the prediction (a record's
    rare value, released beside a random secret, moved the attack's success on the record by 0.14
    under a generator that draws every column independently), where a statistic should not.

``prior``
    The secret value the release holds most often, whatever the record's other columns: the
    guess that needs no record. Its success without the record is the floor every gain is
    measured from, so a record whose secret is the population's usual value is not at risk
    because an attack names it (:mod:`privgame.games.inference`).

``reconstruction``
    Linear reconstruction (after Annamalai, Gadotti and Rocher, USENIX Security 2024) by an
    attacker who knows every other record of D, secrets included (the leave-one-out attacker):
    for every known column and pair of known columns, the release's count of rows holding the
    target's values there *and* each secret value, scaled to |D|, minus the same count in the
    rest of D, is what the target adds to that count if it holds that secret; the secret whose
    excess is largest (each query weighted by one over the rest of D's rows holding the target's
    values there, so that rare combinations, where one record shows, count most) is predicted.
    It is the least-squares solution of the reconstruction's linear system for one unknown
    record.

A continuous secret is predicted as its bin (one of :data:`SECRET_BINS` equal-count bins of the
reference data): the attack succeeds when it names the bin the record's value lies in.

Every scale and bin comes from the attacker's reference rows (D_aux), never from D.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from privgame.core.errors import ParameterError
from privgame.data.schema import CATEGORICAL, EXCLUDED, Schema

__all__ = [
    "BAYES_PRIOR_WEIGHT",
    "INFERENCE_ATTACKS",
    "RECONSTRUCTION",
    "SECRET_BINS",
    "SecretAttack",
    "inference_attacks",
    "secret_problems",
]

INFERENCE_ATTACKS: tuple[str, ...] = ("nearest", "bayes", "prior")
"""The attribute-inference attacks every attacker runs, in the order their results are stored."""
RECONSTRUCTION = "reconstruction"
"""The attack only an attacker who knows the rest of D runs (the leave-one-out attacker), stored
after :data:`INFERENCE_ATTACKS`."""


def inference_attacks(*, knows_d: bool) -> tuple[str, ...]:
    """The inference attacks of a threat model: :data:`INFERENCE_ATTACKS`, and
    :data:`RECONSTRUCTION` for an attacker who knows every other record of D (the threat model's
    ``knows_d``: the leave-one-out attacker)."""
    return (*INFERENCE_ATTACKS, RECONSTRUCTION) if knows_d else INFERENCE_ATTACKS


SECRET_BINS = 10
"""A continuous secret (or known column, for ``bayes``) is cut into this many equal-count bins."""
BAYES_PRIOR_WEIGHT = 20.0
"""``bayes``' m-estimate weight: a value's likelihood given a secret leans on its share of the
whole release as much as on this many rows."""
_CHUNK_CELLS = 4_000_000


def secret_problems(schema: Schema, secrets: Sequence[str]) -> list[str]:
    """Every reason the named columns cannot be secrets of ``schema``, one sentence each.

    A secret must be a column of the table, used by the generator (not excluded: an identifier,
    a constant or a column the user left out), with at least two values, and not the only
    column (the attacker needs the others).
    """
    out: list[str] = []
    names = [c.name for c in schema.columns]
    seen: set[str] = set()
    for name in secrets:
        if name in seen:
            out.append(f"secret column {name!r} is named twice; name each secret once.")
            continue
        seen.add(name)
        if name not in names:
            out.append(f"secret column {name!r} is not in the table; its columns are {names}.")
            continue
        column = schema.column(name)
        if column.role == EXCLUDED:
            why = f" ({column.reason})" if column.reason else ""
            out.append(
                f"secret column {name!r} is excluded from the release{why}: an identifier or a constant "
                "reveals nothing to infer. Choose a column the generator uses (the roles of the "
                "columns: privgame schema FILE)."
            )
        elif column.distinct < 2:
            out.append(f"secret column {name!r} holds a single value: there is nothing to infer.")
    if len(schema.used) < 2 and secrets:
        out.append("an inference attack needs at least one known column besides the secret.")
    return out


def _equal_count_edges(values: np.ndarray, bins: int) -> np.ndarray:
    """Inner edges cutting ``values`` into at most ``bins`` bins of about equal counts."""
    if len(values) == 0:
        return np.empty(0)
    edges = np.unique(np.quantile(values, np.linspace(0, 1, bins + 1)[1:-1]))
    return edges


@dataclass(frozen=True)
class SecretAttack:
    """Both inference attacks on one secret column, prepared from the attacker's reference rows.

    Build it with :meth:`prepare`. Attributes are arrays over the encoded table's columns.

    Attributes
    ----------
    secret : int
        The secret's column in the encoded table.
    known : ndarray of int
        The known columns.
    categorical : ndarray of bool
        Over ``known``: whether each is categorical.
    scale : ndarray of float
        Over ``known``: each continuous column's range in the reference rows (1 for categorical).
    known_edges : tuple of ndarray
        Over ``known``: each continuous column's bin edges for ``bayes`` (empty for categorical).
    known_levels : ndarray of int
        Over ``known``: the number of values ``bayes`` sees in each column.
    secret_edges : ndarray or None
        A continuous secret's bin edges; None for a categorical one.
    n_classes : int
        The number of values (or bins) the secret can take.
    """

    secret: int
    known: np.ndarray
    categorical: np.ndarray
    scale: np.ndarray
    known_edges: tuple[np.ndarray, ...]
    known_levels: np.ndarray
    secret_edges: np.ndarray | None
    n_classes: int

    @classmethod
    def prepare(cls, schema: Schema, secret: str, reference: np.ndarray) -> SecretAttack:
        """The attacks on column ``secret`` (a name), scaled on ``reference`` (encoded rows the
        attacker knows, D_aux).

        Raises
        ------
        ParameterError
            If ``secret`` cannot be a secret (:func:`secret_problems`).
        """
        problems = secret_problems(schema, [secret])
        if problems:
            raise ParameterError("The secret column cannot be attacked.", problems)
        used = list(schema.used)
        index = [c.name for c in used].index(secret)
        known = np.array([j for j in range(len(used)) if j != index], dtype=np.int64)
        categorical = np.array([used[j].role == CATEGORICAL for j in known], dtype=bool)
        reference = np.asarray(reference, dtype=np.float64)
        scale = np.ones(len(known))
        edges: list[np.ndarray] = []
        levels = np.empty(len(known), dtype=np.int64)
        for k, j in enumerate(known):
            if categorical[k]:
                edges.append(np.empty(0))
                levels[k] = max(1, len(used[j].categories or ()))
            else:
                values = reference[:, j]
                span = float(values.max() - values.min()) if len(values) else 0.0
                scale[k] = span if span > 0 else 1.0
                edges.append(_equal_count_edges(values, SECRET_BINS))
                levels[k] = len(edges[-1]) + 1
        if used[index].role == CATEGORICAL:
            secret_edges = None
            n_classes = max(1, len(used[index].categories or ()))
        else:
            secret_edges = _equal_count_edges(reference[:, index], SECRET_BINS)
            n_classes = len(secret_edges) + 1
        return cls(
            secret=index,
            known=known,
            categorical=categorical,
            scale=scale,
            known_edges=tuple(edges),
            known_levels=levels,
            secret_edges=secret_edges,
            n_classes=n_classes,
        )

    def classes(self, values: np.ndarray) -> np.ndarray:
        """The secret's class (category code, or bin) of each value of the secret column."""
        values = np.asarray(values, dtype=np.float64)
        if self.secret_edges is None:
            return np.clip(values.astype(np.int64), 0, self.n_classes - 1)
        return np.searchsorted(self.secret_edges, values, side="right").astype(np.int64)

    def _levels(self, rows: np.ndarray) -> np.ndarray:
        """Each known column's value index for ``bayes`` (codes, or bins of continuous columns)."""
        out = np.empty((len(rows), len(self.known)), dtype=np.int64)
        for k, j in enumerate(self.known):
            column = rows[:, j]
            if self.categorical[k]:
                out[:, k] = np.clip(column.astype(np.int64), 0, self.known_levels[k] - 1)
            else:
                out[:, k] = np.searchsorted(self.known_edges[k], column, side="right")
        return out

    def predict_nearest(self, synthetic: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """The ``nearest`` attack's predicted class for each target row (shape (R,))."""
        synthetic = np.asarray(synthetic, dtype=np.float64)
        targets = np.atleast_2d(np.asarray(targets, dtype=np.float64))
        known_syn = synthetic[:, self.known]
        labels = self.classes(synthetic[:, self.secret])
        onehot = np.zeros((len(synthetic), self.n_classes), dtype=np.float32)
        onehot[np.arange(len(synthetic)), labels] = 1.0
        cat = self.categorical
        out = np.empty(len(targets), dtype=np.int64)
        step = max(1, _CHUNK_CELLS // max(1, len(synthetic) * max(1, len(self.known))))
        for start in range(0, len(targets), step):
            block = targets[start : start + step][:, self.known]
            distance = np.zeros((len(block), len(synthetic)))
            if cat.any():
                distance += (known_syn[None, :, cat] != block[:, None, cat]).sum(axis=2)
            if (~cat).any():
                gaps = np.abs(known_syn[None, :, ~cat] - block[:, None, ~cat]) / self.scale[~cat]
                distance += gaps.sum(axis=2)
            nearest = distance <= distance.min(axis=1, keepdims=True) + 1e-12
            counts = nearest.astype(np.float32) @ onehot
            out[start : start + len(block)] = counts.argmax(axis=1)
        return out

    def predict_bayes(self, synthetic: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """The ``bayes`` attack's predicted class for each target row (shape (R,))."""
        synthetic = np.asarray(synthetic, dtype=np.float64)
        targets = np.atleast_2d(np.asarray(targets, dtype=np.float64))
        labels = self.classes(synthetic[:, self.secret])
        k = self.n_classes
        class_counts = np.bincount(labels, minlength=k).astype(np.float64)
        log_post = np.tile(np.log((class_counts + 1.0) / (len(synthetic) + k)), (len(targets), 1))
        syn_levels = self._levels(synthetic)
        target_levels = self._levels(targets)
        for c in range(len(self.known)):
            v = int(self.known_levels[c])
            table = np.bincount(syn_levels[:, c] * k + labels, minlength=v * k).reshape(v, k)
            share = (table.sum(axis=1, keepdims=True) + 1.0) / (len(synthetic) + v)
            log_like = np.log((table + BAYES_PRIOR_WEIGHT * share) / (class_counts + BAYES_PRIOR_WEIGHT))
            log_post += log_like[np.clip(target_levels[:, c], 0, v - 1)]
        return log_post.argmax(axis=1)

    def predict_prior(self, synthetic: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """The ``prior`` attack's predicted class for each target row (the release's most frequent)."""
        labels = self.classes(np.asarray(synthetic, dtype=np.float64)[:, self.secret])
        most = int(np.bincount(labels, minlength=self.n_classes).argmax())
        return np.full(len(np.atleast_2d(targets)), most, dtype=np.int64)

    def _query_counts(self, rows: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Rows holding ``x``'s exact values on each known column and pair of known columns, by
        secret class: shape (Q, n_classes), the Q = d (d + 1) / 2 queries of the upper triangle."""
        rows = np.asarray(rows, dtype=np.float64)
        match = (rows[:, self.known] == np.asarray(x, dtype=np.float64)[self.known][None, :]).astype(
            np.float64
        )
        onehot = np.zeros((len(rows), self.n_classes))
        onehot[np.arange(len(rows)), self.classes(rows[:, self.secret])] = 1.0
        counts = np.einsum("ij,ik,ic->jkc", match, match, onehot, optimize=True)
        upper = np.triu_indices(len(self.known))
        return counts[upper[0], upper[1], :]

    def reconstruction_counts(self, others: np.ndarray, x: np.ndarray) -> np.ndarray:
        """What the ``reconstruction`` attack knows of the rest of D for target ``x``: the counts of
        :meth:`_query_counts` on ``others`` (every record of D but the target), shape (Q, k)."""
        return self._query_counts(others, x)

    def predict_reconstruction(self, synthetic: np.ndarray, x: np.ndarray, rest: np.ndarray, n: int) -> int:
        """The ``reconstruction`` attack's predicted class for target ``x``.

        Parameters
        ----------
        synthetic : ndarray
            The release.
        x : ndarray
            The target's encoded row (its secret is not read).
        rest : ndarray of shape (Q, k)
            :meth:`reconstruction_counts` of the rest of D.
        n : int
            |D|, to which the release's counts are scaled.
        """
        synthetic = np.asarray(synthetic, dtype=np.float64)
        released = self._query_counts(synthetic, x) * (n / max(len(synthetic), 1))
        weights = 1.0 / (rest.sum(axis=1) + 1.0)
        excess = (weights[:, None] * (released - rest)).sum(axis=0)
        return int(excess.argmax())

    def predict(self, synthetic: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """Every attack's predicted class for each target: int array (len(INFERENCE_ATTACKS), R)."""
        return np.stack(
            [
                self.predict_nearest(synthetic, targets),
                self.predict_bayes(synthetic, targets),
                self.predict_prior(synthetic, targets),
            ]
        )

    def correct(self, synthetic: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """Whether each attack names each target's secret: bool array (len(INFERENCE_ATTACKS), R)."""
        targets = np.atleast_2d(np.asarray(targets, dtype=np.float64))
        return self.predict(synthetic, targets) == self.classes(targets[:, self.secret])[None, :]
