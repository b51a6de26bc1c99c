"""The ulp distance that the random-number tests compare CPU-dependent results with (``fixtures/float_compare``)."""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixtures.float_compare import assert_gamma_samples_close, assert_within_ulps, ulp_distance  # noqa: E402


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ulp_distance_counts_the_floats_between(dtype):
    one, tiny, big = dtype(1.0), np.finfo(dtype).smallest_subnormal, np.finfo(dtype).max
    three_up = one
    for _ in range(3):
        three_up = np.nextafter(three_up, dtype(2.0))
    ours = np.array([one, three_up, tiny, -tiny, 0.0, -0.0, np.nan, np.nan, np.inf, big, -one], dtype)
    theirs = np.array([one, one, -tiny, 0.0, -0.0, 0.0, np.nan, 1.0, big, np.inf, one], dtype)
    np.testing.assert_array_equal(ulp_distance(ours, theirs), [0, 3, 2, 1, 0, 0, 0, np.inf, 1, 1,
                                                               2 * float(one.view(f"i{one.itemsize}"))])


def test_the_bounds_allow_what_they_say():
    x = np.linspace(1.0, 2.0, 10, dtype=np.float32)
    assert_within_ulps(np.nextafter(x, np.float32(3.0)), x, 1)
    with pytest.raises(AssertionError, match="1 of 10 elements more than 0 ulp apart"):
        assert_within_ulps(np.where(x == x[3], np.nextafter(x, np.float32(3.0)), x), x, 0)
    flipped = x.copy()
    flipped[2] = 7.0  # another valid sample: one is allowed
    assert_gamma_samples_close(flipped, x)
    flipped[5] = 9.0
    with pytest.raises(AssertionError, match="2 of 10 elements"):
        assert_gamma_samples_close(flipped, x)
    with pytest.raises(AssertionError):
        assert_gamma_samples_close(x.astype(np.float64), x)
