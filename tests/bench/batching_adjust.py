"""The added instructions per I/O at equal batching: a regression over counted windows.

Under emulation the two VMs' relative speed decides how much the kernel batches (PDUs per TCP
segment, segments per interrupt, timer ticks per I/O), and at QD16 that moves a VM's whole count
per I/O by 2-3 % between windows of the same configuration, far more than the agent adds at
1 in 100. The batching is visible: the data NIC's packets and interrupts and the timer's
interrupts per I/O, counted at the same window edges. Over all windows of a role, with agents and
without, least squares fits

    instructions per I/O = a + d * (1 with agents, 0 without) + sum_j b_j * batching_j per I/O

and d is the added instructions per I/O at equal batching, with a t-based 95 % interval from the
fit's residuals. What d leaves out, by construction, is a change in the batching itself caused by
the agent (a mean shift in a batching figure between the configurations): insn_overhead.py prints
those means beside it, and the whole count's paired medians stay in the table.
"""
import math
import statistics

# The batching figures per I/O that each window carries, per role (overhead_guest.sh nic-stats).
BATCHING = ("rx_packets", "tx_packets", "nic_irqs", "timer_irqs")


def _solve(normal, rhs):
    """Solves the symmetric system normal * x = rhs (Gauss-Jordan with pivoting); also returns
    the inverse's diagonal (for the coefficients' variances). None when it is singular."""
    k = len(rhs)
    m = [list(row) + [rhs[i]] + [1.0 if j == i else 0.0 for j in range(k)]
         for i, row in enumerate(normal)]
    scale = max(abs(v) for row in normal for v in row) or 1.0
    for c in range(k):
        p = max(range(c, k), key=lambda r: abs(m[r][c]))
        if abs(m[p][c]) < 1e-9 * scale:
            return None
        m[c], m[p] = m[p], m[c]
        pivot = m[c][c]
        m[c] = [v / pivot for v in m[c]]
        for r in range(k):
            if r != c and m[r][c]:
                f = m[r][c]
                m[r] = [v - f * w for v, w in zip(m[r], m[c])]
    return [m[i][k] for i in range(k)], [m[i][k + 1 + i] for i in range(k)]


def t_quantile_975(dof):
    """The t distribution's 97.5 % point (Cornish-Fisher expansion in 1/dof: within 0.2 % of the
    tables from 3 degrees of freedom up: 3.1786 for 3.1824, exact to four places from 10)."""
    z = 1.959963984540054
    g1 = (z ** 3 + z) / 4
    g2 = (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96
    g3 = (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384
    g4 = (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / 92160
    return z + g1 / dof + g2 / dof ** 2 + g3 / dof ** 3 + g4 / dof ** 4


def _fit(windows, used):
    """Least squares of instructions per I/O on the agents' indicator and the figures `used`
    (each centred and scaled, so that one tolerance tells a figure that adds nothing from one
    that matters). (coefficients, inverse diagonal, residuals) or None when singular."""
    columns = []
    for b in used:
        values = [w[2][b] for w in windows]
        mean = statistics.mean(values)
        spread = statistics.pstdev(values) or 1.0
        columns.append([(v - mean) / spread for v in values])
    rows = [[1.0, 1.0 if w[0] else 0.0] + [c[i] for c in columns] for i, w in enumerate(windows)]
    ys = [w[1] for w in windows]
    k = len(rows[0])
    normal = [[sum(r[a] * r[b] for r in rows) for b in range(k)] for a in range(k)]
    rhs = [sum(r[a] * y for r, y in zip(rows, ys)) for a in range(k)]
    solved = _solve(normal, rhs)
    if solved is None:
        return None
    coef, inverse_diagonal = solved
    residuals = [y - sum(c * v for c, v in zip(coef, r)) for r, y in zip(rows, ys)]
    return coef, inverse_diagonal, residuals


def added_at_equal_batching(windows):
    """windows: [(with_agents: bool, instructions per I/O, {batching figure: per I/O})].

    Returns {"added", "lo", "hi", "without", "ratio", "ratio_lo", "ratio_hi", "windows",
    "residual_sd", "used"} or None when the windows cannot carry the fit (no window on one side,
    or fewer than four windows). The figures enter in BATCHING's order while the windows leave
    three degrees of freedom for the residuals; one that does not vary, or that another already
    explains (NVMe/RDMA's packets per I/O are fixed), is left out."""
    if not windows or all(w[0] for w in windows) or not any(w[0] for w in windows):
        return None
    used = []
    fit = _fit(windows, used)
    for b in BATCHING:
        if len(used) + 2 + 1 + 3 > len(windows):
            break
        if len({round(w[2].get(b, 0.0), 9) for w in windows}) < 2:
            continue
        tried = _fit(windows, used + [b]) if all(b in w[2] for w in windows) else None
        if tried is not None:
            used.append(b)
            fit = tried
    if fit is None or len(windows) < len(used) + 2 + 3:
        return None
    coef, inverse_diagonal, residuals = fit
    dof = len(windows) - len(used) - 2
    residual_sd = math.sqrt(sum(e * e for e in residuals) / dof)
    half = t_quantile_975(dof) * residual_sd * math.sqrt(max(inverse_diagonal[1], 0.0))
    without = statistics.mean(w[1] for w in windows if not w[0])
    added = coef[1]
    return {"added": added, "lo": added - half, "hi": added + half, "without": without,
            "ratio": 1 + added / without, "ratio_lo": 1 + (added - half) / without,
            "ratio_hi": 1 + (added + half) / without, "windows": len(windows),
            "residual_sd": residual_sd, "used": used}


def batching_means(windows):
    """{figure: (mean without agents, mean with)} over the windows: a shift between the two is a
    change in batching that added_at_equal_batching does not count."""
    out = {}
    for b in BATCHING:
        off = [w[2][b] for w in windows if not w[0] and b in w[2]]
        on = [w[2][b] for w in windows if w[0] and b in w[2]]
        if off and on:
            out[b] = (statistics.mean(off), statistics.mean(on))
    return out
