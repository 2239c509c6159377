"""What a sliced vocabulary keeps, said as it is: the counted tokens, the ids filled only to reach a size, the
`counted` level and the `+training` source, their one-line errors, and the committed vocabulary cells' ids."""

from __future__ import annotations

import pytest
import yaml

from harness.spec.matrix import expand, expand_spec
from harness.stack.techniques.vocabulary import (
    _source_level,
    _vocabulary_level,
    choose_kept,
    corpus_source,
    counts_training,
)
from tests.conftest import REPO


def test_counted_keeps_exactly_the_counted_and_the_protected_tokens():
    kept = choose_kept([[9, 9, 4], [4, 12, 500]], vocab_size=100, target="counted", protected={0, 1, 4, 150})
    assert kept.ids == [0, 1, 4, 9, 12]  # 500 and 150 are no ids of a 100-row model
    assert (kept.counted, kept.filled, kept.left_out, kept.fill_rule) == (3, 0, 0, "none")


def test_a_size_says_how_many_ids_it_filled_and_how_many_counted_tokens_it_left_out():
    larger = choose_kept([[9, 9, 4], [4, 12]], vocab_size=100, target=8, protected={0, 50})
    assert larger.ids == [0, 1, 2, 3, 4, 9, 12, 50]  # the counted ones, then the lowest ids not yet kept
    assert (larger.counted, larger.filled, larger.left_out, larger.fill_rule) == (3, 3, 0, "lowest ids")
    smaller = choose_kept([[9, 9, 4, 4, 4], [12]], vocab_size=100, target=3, protected={0})
    assert smaller.ids == [0, 4, 9] and (smaller.counted, smaller.filled, smaller.left_out) == (3, 0, 1)


@pytest.mark.parametrize(("value", "expected"), [
    ("corpus:help:es,ca,en+training", ("help", ["es", "ca", "en"])),
    ("corpus:en+training", ("manpages", ["en"])),
])
def test_a_corpus_and_the_training_data_are_one_source(value, expected):
    assert _source_level(value) is None
    assert corpus_source(value) == expected and counts_training(value)
    assert counts_training("training") and not counts_training("corpus:help:es,ca,en")


def test_counted_is_a_level_of_its_own_and_a_misspelling_is_refused():
    assert _vocabulary_level("counted") is None
    assert "nor 'counted'" in _vocabulary_level("count")
    cells = expand_spec("m", yaml.safe_load("fixed: {model: 'arch:tiny-llama'}\n"
                                            "axes: {vocabulary: [native, counted, 1024]}"))
    assert len({c.cell_id for c in cells}) == 3


def test_the_committed_vocabulary_cells_keep_their_ids_and_their_results():
    from harness.results import check

    on_disk = {p.stem for p in (REPO / "results" / "vocab-16gb").glob("*.json")}
    assert {c.cell_id for c in expand("vocab-16gb")} == on_disk and len(on_disk) == 4
    for cell_id in on_disk:
        check(REPO / "results" / "vocab-16gb" / f"{cell_id}.json")
