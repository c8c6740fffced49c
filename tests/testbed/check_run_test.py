#!/usr/bin/env python3
"""check_run.py's shift logic on known numbers: what it must pass and what it must fail."""
import contextlib
import io
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_run  # noqa: E402


def group(**medians):
    """A report group whose stages have these medians (and means) in us."""
    return {"stages": [{"id": k, "p50_us": v, "mean_us": v} for k, v in medians.items()]}


def failures_of(base, new, stage, injected_us):
    check_run.failures = 0
    with contextlib.redirect_stdout(io.StringIO()):
        check_run.shift_one("test", base, new, stage, injected_us)
    return check_run.failures


# A 4 KiB read under load: a large network median, as on a busy 2-core machine under TCG.
BASE = dict(host_block=20, host_driver=50, network=4000, target_driver=60, storage=100,
            end_to_end=4230)


class DriveDelayShift(unittest.TestCase):
    def test_the_delay_in_storage_passes(self):
        new = dict(BASE, storage=5100, end_to_end=9230)
        self.assertEqual(failures_of(group(**BASE), group(**new), "storage", 5000), 0)

    def test_storage_short_of_the_delay_fails(self):
        new = dict(BASE, storage=4000, end_to_end=8130)
        self.assertEqual(failures_of(group(**BASE), group(**new), "storage", 5000), 1)

    def test_a_slow_machine_lets_network_move_by_its_share(self):
        # The host driver took 2.5x as long: CPU work slowed; network may rise by 20 % of the
        # delay plus its slowdown, here 1,000 + 6,000 us, but never by half the delay.
        new = dict(BASE, host_driver=125, network=6400, storage=5100, end_to_end=11705)
        self.assertEqual(failures_of(group(**BASE), group(**new), "storage", 5000), 0)

    def test_the_whole_delay_landing_in_network_fails_however_slow_the_machine(self):
        # Storage got its delay, and network rose by a whole delay more: the old allowance
        # (1,000 + 1.5 x 4,000 = 7,000 us) passed it.
        new = dict(BASE, host_driver=125, network=9000, storage=5100, end_to_end=14305)
        self.assertEqual(failures_of(group(**BASE), group(**new), "storage", 5000), 1)


class LinkDelayShift(unittest.TestCase):
    def test_the_end_to_ends_rise_in_network_passes(self):
        new = dict(BASE, network=5050, end_to_end=5280)
        self.assertEqual(failures_of(group(**BASE), group(**new), "network", 1000), 0)

    def test_the_delay_in_storage_instead_fails(self):
        new = dict(BASE, storage=1100, end_to_end=5230)
        self.assertGreaterEqual(failures_of(group(**BASE), group(**new), "network", 1000), 2)


if __name__ == "__main__":
    unittest.main()
