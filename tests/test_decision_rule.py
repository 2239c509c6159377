"""The one decision rule: bootstrap p-values, Holm's step-down and its levels, the interval that agrees with the
p-value, the word, and Wilson's interval for one arm's rate, against values worked by hand or published."""

from __future__ import annotations

import numpy as np
import pytest

from harness.report.decision_rule import holm, interval, p_value, word
from harness.report.wilson import wilson


def test_holm_rejects_step_down_on_the_textbook_example():
    # four p-values at alpha 0.05: 0.005 <= 0.05/4 and 0.01 <= 0.05/3 are rejected; 0.03 > 0.05/2 stops the steps
    steps = holm([0.01, 0.04, 0.03, 0.005])
    assert [s.rejected for s in steps] == [True, False, False, True]
    # adjusted: 4 x 0.005, 3 x 0.01, 2 x 0.03, then max(1 x 0.04, 0.06): the running maximum keeps them ordered
    assert [s.p_holm for s in steps] == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # the levels of steps 1 and 2, then the level of the step that stopped for it and every later one
    assert [s.level for s in steps] == pytest.approx([1 - 0.05 / 3, 1 - 0.05 / 2, 1 - 0.05 / 2, 1 - 0.05 / 4])


def test_holm_of_one_comparison_is_the_plain_test():
    assert holm([0.04])[0].rejected and holm([0.04])[0].level == pytest.approx(0.95)
    assert not holm([0.06])[0].rejected and holm([0.06])[0].p_holm == pytest.approx(0.06)


def test_an_adjusted_p_value_never_passes_one():
    assert [s.p_holm for s in holm([0.5, 0.6, 0.7])] == pytest.approx([1.0, 1.0, 1.0])


def test_the_p_value_is_twice_the_smaller_tail_with_the_plus_one_correction():
    assert p_value(np.full(999, 0.3)) == pytest.approx(2 / 1000)  # no draw at or below 0
    assert p_value(np.array([-1.0] * 10 + [1.0] * 989)) == pytest.approx(2 * 11 / 1000)
    assert p_value(np.zeros(100)) == 1.0  # every draw on both sides
    assert p_value(np.linspace(-1, 1, 1001)) == 1.0


def test_the_interval_excludes_zero_exactly_when_p_is_at_most_one_minus_its_level():
    rng = np.random.default_rng(7)
    for trial in range(300):
        draws = rng.normal(rng.uniform(-0.5, 0.5), 0.2, size=rng.integers(50, 2000))
        level = rng.choice([0.95, 0.975, 1 - 0.05 / 3, 0.99, 0.995])
        low, high = interval(draws, level)
        assert (low > 0 or high < 0) == (p_value(draws) <= 1 - level), trial


def test_too_few_draws_for_a_level_give_no_bounds():
    assert interval(np.ones(10), 0.999) == (-np.inf, np.inf)


@pytest.mark.parametrize(("low", "high", "rejected", "expected"), [
    (0.02, 0.08, True, "higher"),
    (-0.3, -0.1, True, "lower"),
    (0.001, 0.004, True, "higher"),  # Holm rejects: the word is the direction, however small
    (-0.03, 0.04, False, "no difference"),
    (-0.06, 0.01, False, "inconclusive"),  # holds 0 but reaches past the margin
])
def test_the_word(low, high, rejected, expected):
    assert word(low, high, rejected, 0.05) == expected


@pytest.mark.parametrize(("successes", "n", "expected"), [
    # Newcombe (1998), Statistics in Medicine 17:857, table I, method 3 (Wilson's score interval)
    (81, 263, (0.2553, 0.3662)),
    (15, 148, (0.0624, 0.1605)),
    (0, 20, (0.0, 0.1611)),
    (1, 29, (0.0061, 0.1718)),
    (29, 29, (0.8830, 1.0)),
])
def test_wilson_matches_published_intervals(successes, n, expected):
    assert wilson(successes, n) == pytest.approx(expected, abs=5e-5)
