#!/usr/bin/env python3
"""batching_adjust.py on windows simulated with a known cost per I/O and per unit of batching
(simulated data: the estimator's arithmetic is what is tested; the bed shows what it does with real
counts, docs/overhead.md)."""
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import batching_adjust as ba  # noqa: E402

BASE = 51000.0  # a QD16 host's instructions per I/O without agents
PER_RX_PACKET = 4900.0
PER_TX_PACKET = 16800.0
PER_NIC_IRQ = 12000.0


def windows(added, n_each, noise_sd, seed, shift_rx=0.0):
    """n_each windows without agents and n_each with (alternating), batching drawn at random as
    the VMs' relative speed would: the count follows it exactly, plus noise_sd of other noise."""
    rng = random.Random(seed)
    out = []
    for i in range(2 * n_each):
        with_agents = i % 2 == 1
        b = {"rx_packets": rng.uniform(3.0, 3.2) + (shift_rx if with_agents else 0.0),
             "tx_packets": rng.uniform(0.90, 0.96),
             "nic_irqs": rng.uniform(1.2, 1.35),
             "timer_irqs": 0.16}  # constant: must be left out, not make the fit singular
        y = (BASE + (added if with_agents else 0.0) + PER_RX_PACKET * (b["rx_packets"] - 3.1)
             + PER_TX_PACKET * (b["tx_packets"] - 0.93) + PER_NIC_IRQ * (b["nic_irqs"] - 1.27)
             + rng.gauss(0.0, noise_sd))
        out.append((with_agents, y, b))
    return out


class AddedAtEqualBatching(unittest.TestCase):
    def test_recovers_the_known_added_cost_despite_batching_swings(self):
        w = windows(added=450.0, n_each=12, noise_sd=60.0, seed=7)
        raw_off = [y for a, y, _ in w if not a]
        # the batching alone spreads the windows by far more than the cost looked for
        self.assertGreater(max(raw_off) - min(raw_off), 1500.0)
        fit = ba.added_at_equal_batching(w)
        self.assertIsNotNone(fit)
        self.assertLess(fit["lo"], 450.0)
        self.assertGreater(fit["hi"], 450.0)
        self.assertLess(fit["hi"] - fit["lo"], 0.005 * BASE)  # resolved to +-0.25 %
        self.assertNotIn("timer_irqs", fit["used"])
        self.assertAlmostEqual(fit["ratio"], 1 + fit["added"] / fit["without"])

    def test_an_interval_misses_a_wrong_cost(self):
        fit = ba.added_at_equal_batching(windows(added=450.0, n_each=12, noise_sd=60.0, seed=8))
        self.assertFalse(fit["lo"] <= 0.0 <= fit["hi"])
        self.assertFalse(fit["lo"] <= 900.0 <= fit["hi"])

    def test_the_interval_covers_the_truth_about_95_times_in_100(self):
        covered = 0
        for seed in range(200):
            fit = ba.added_at_equal_batching(windows(added=300.0, n_each=6, noise_sd=80.0,
                                                     seed=100 + seed))
            covered += fit["lo"] <= 300.0 <= fit["hi"]
        self.assertGreaterEqual(covered, 180)
        self.assertLessEqual(covered, 199)

    def test_a_shift_in_batching_is_reported_not_counted(self):
        # agents that make every window carry 0.1 more received packets per I/O
        w = windows(added=450.0, n_each=12, noise_sd=60.0, seed=9, shift_rx=0.1)
        fit = ba.added_at_equal_batching(w)
        self.assertLess(fit["lo"], 450.0)
        self.assertGreater(fit["hi"], 450.0)
        off, on = ba.batching_means(w)["rx_packets"]
        self.assertAlmostEqual(on - off, 0.1, delta=0.05)

    def test_too_few_windows_or_one_side_only_give_no_figure(self):
        self.assertIsNone(ba.added_at_equal_batching(windows(450.0, 2, 60.0, seed=1)))
        only_with = [w for w in windows(450.0, 12, 60.0, seed=1) if w[0]]
        self.assertIsNone(ba.added_at_equal_batching(only_with))
        self.assertIsNone(ba.added_at_equal_batching([]))

    def test_few_windows_drop_figures_rather_than_fail(self):
        fit = ba.added_at_equal_batching(windows(450.0, 3, 60.0, seed=2))
        self.assertIsNotNone(fit)
        self.assertLess(len(fit["used"]), 3)
        self.assertEqual(fit["windows"], 6)

    def test_a_figure_another_explains_is_left_out(self):
        # sent packets exactly twice the received ones (as NVMe/RDMA's fixed exchanges give): the
        # second adds nothing the first does not, and would make the fit singular
        rng = random.Random(3)
        w = []
        for i in range(24):
            rx, irqs = rng.uniform(3.0, 3.2), rng.uniform(1.2, 1.35)
            y = BASE + 450.0 * (i % 2) + PER_RX_PACKET * rx + PER_NIC_IRQ * irqs + rng.gauss(0, 60)
            w.append((i % 2 == 1, y, {"rx_packets": rx, "tx_packets": 2 * rx, "nic_irqs": irqs}))
        fit = ba.added_at_equal_batching(w)
        self.assertIsNotNone(fit)
        self.assertEqual(fit["used"], ["rx_packets", "nic_irqs"])
        self.assertLess(fit["lo"], 450.0)
        self.assertGreater(fit["hi"], 450.0)
        self.assertLess(fit["hi"] - fit["lo"], 0.005 * BASE)

    def test_t_quantiles_match_the_tables(self):
        for dof, table in ((3, 3.1824), (5, 2.5706), (10, 2.2281), (30, 2.0423)):
            self.assertAlmostEqual(ba.t_quantile_975(dof), table, delta=0.002 * table)


if __name__ == "__main__":
    unittest.main()
