"""The crossed bootstrap of a paired effect: every draw resamples the training seeds with replacement and the held-out
documents with replacement, then the items within each drawn document, and applies the same document and item draw
to every seed and every arm (the items are the same in all of them). The interval so carries the variance between
training runs and the sampling of documents and items together; a bootstrap within each seed alone leaves out the
first and reads the same items as independent per seed. Why it is so: docs/quality.md."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

DRAWS = 4000
SEED = 0
# draws computed at once: a (draws x items) weight matrix of at most this many numbers
CHUNK_NUMBERS = 2**22


@dataclass(frozen=True)
class Arm:
    """One arm's item outcomes, (seeds, items), seeds and items in the order shared by every arm. A rate reads
    `values` (0/1); bits per byte reads `values` as log-likelihoods (nats) and `nbytes` as the texts' bytes."""

    values: np.ndarray
    nbytes: np.ndarray | None = None

    def metric(self, weights: np.ndarray) -> np.ndarray:
        """The metric of each seed under each draw's item weights (draws, items) -> (draws, seeds)."""
        if self.nbytes is None:
            return weights @ self.values.T / weights.sum(axis=1, keepdims=True)
        return -(weights @ self.values.T) / (weights @ self.nbytes.T) / math.log(2)


# an effect: arms with their signs, +a - b, or (+a - a untrained) - (b - b untrained)
Terms = Sequence[tuple[float, Arm]]


@dataclass(frozen=True)
class Bootstrap:
    effect: float  # the mean over seeds of the per-seed effect, on every item once
    per_seed: tuple[float, ...]
    draws: np.ndarray  # the effect under each draw


def _per_seed(terms: Terms, weights: np.ndarray) -> np.ndarray:
    return sum(sign * arm.metric(weights) for sign, arm in terms)  # type: ignore[return-value]


def _item_weights(rng: np.random.Generator, members: list[np.ndarray], items: int, draws: int) -> np.ndarray:
    """How often each item is drawn in each draw: documents with replacement, then each drawn copy of a document's
    m items resamples m of them with replacement (the counts of c copies are one multinomial of c x m)."""
    documents = len(members)
    copies = rng.multinomial(documents, np.full(documents, 1 / documents), size=draws)
    weights = np.zeros((draws, items))
    for d, member in enumerate(members):
        if len(member) == 1:
            weights[:, member[0]] = copies[:, d]
        else:
            weights[:, member] = rng.multinomial(copies[:, d] * len(member), np.full(len(member), 1 / len(member)))
    return weights


def crossed(terms: Terms, documents: np.ndarray, draws: int = DRAWS, seed: int = SEED) -> Bootstrap:
    """The effect and its crossed-bootstrap draws. `documents`: the document of each item (any labels)."""
    seeds, items = terms[0][1].values.shape
    per_seed = _per_seed(terms, np.ones((1, items)))[0]
    _, index = np.unique(np.asarray(documents), return_inverse=True)
    members = [np.flatnonzero(index == d) for d in range(index.max() + 1)]
    rng = np.random.default_rng(seed)
    found = []
    chunk = max(1, CHUNK_NUMBERS // items)
    for start in range(0, draws, chunk):
        size = min(chunk, draws - start)
        drawn_seeds = rng.multinomial(seeds, np.full(seeds, 1 / seeds), size=size)
        effects = _per_seed(terms, _item_weights(rng, members, items, size))
        found.append((drawn_seeds * effects).sum(axis=1) / seeds)
    return Bootstrap(float(per_seed.mean()), tuple(float(v) for v in per_seed), np.concatenate(found))
