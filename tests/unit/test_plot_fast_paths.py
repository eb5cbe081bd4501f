"""A time plot's drawing takes cheaper routes than numpy's for its few hundred points: lines joined
into dots in Python, all its series read in one query, runs and the gap step worked out over
lists. Each must give exactly what the general route gives, over hostile inputs too (NaN, inf,
huge values, single points, holes, two axes, points on the edge of a rounding)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from jtop_roof.analysis.history import History
from jtop_roof.model.records import Clocked, Gpu, Sample
from jtop_roof.tui.widgets import chart
from jtop_roof.tui.widgets.chart import Chart, Line, render_chart
from jtop_roof.tui.widgets.timeplot import _max_step, _segments

RED, BLUE, GREEN = (255, 0, 0), (0, 0, 255), (0, 255, 0)
HOSTILE = [math.nan, math.inf, -math.inf, 1e300, -1e300, 1e-300, 0.0, -0.0]


def _value(rng: random.Random, low: float, high: float, rows: int) -> float:
    """Mostly a value on the plot, sometimes one off it or hostile, sometimes one that lands
    within a hair of a dot's edge (where ``floor(round(x, 8))`` and ``floor(x)`` differ)."""
    pick = rng.random()
    if pick < 0.05:
        return rng.choice(HOSTILE)
    if pick < 0.25:  # placed = 0.5 + (cells - 1) * fraction: just under / on a whole number
        cells = 2 * rows
        whole = rng.randrange(-cells, 3 * cells)
        nudge = rng.choice([-1e-6, -3e-9, -1e-9, -1e-12, 0.0, 1e-12, 5e-9])
        return low + (high - low) * (whole + nudge - 0.5) / (cells - 1)
    if pick < 0.3:
        return rng.uniform(low - 3 * (high - low), high + 3 * (high - low))
    return rng.uniform(low, high)


Lines = list[tuple[Line, tuple[float, float]]]


def _random_lines(rng: random.Random, width: int, height: int) -> tuple[Lines, tuple[float, float]]:
    x_range = rng.choice([(-120.0, 0.0), (-7.0, 0.0), (-1e-3, 0.0), (0.0, 0.0), (-3600.0, 0.0)])
    ranges = [rng.choice([(0.0, 100.0), (35.0, 52.0), (0.0, 1.0), (5.0, 5.0), (-1e6, 1e6), (0.0, 3000.0)])
              for _ in range(2)]  # two axes
    lines = []
    for _ in range(rng.randint(1, 5)):
        y_range = rng.choice(ranges)
        count = rng.choice([0, 1, 1, 2, 3, rng.randint(4, 40), rng.randint(40, 120)])
        xs = sorted(_value(rng, *x_range, width) for _ in range(count))
        ys = [_value(rng, *y_range, height) for _ in range(count)]
        if rng.random() < 0.3:  # as a plot gives them, or as arrays (float32 ones too)
            kind = rng.choice([np.float64, np.float32])
            with np.errstate(over="ignore"):  # 1e300 as float32: inf
                line = Line(np.array(xs, dtype=kind), np.array(ys, dtype=kind), rng.choice([RED, GREEN]))
        else:
            line = Line(xs, ys, rng.choice([RED, BLUE, GREEN, None]))
        lines.append((line, y_range))
    return lines, x_range


@pytest.fixture
def any_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Python route for every input, not only the small ones it is taken for."""
    monkeypatch.setattr(chart, "PYTHON_POINTS", 10**6)
    monkeypatch.setattr(chart, "PYTHON_DOTS", 10**6)


def test_python_dots_are_numpys_dots(any_size: None) -> None:
    rng = random.Random(20240518)
    taken = 0
    for _ in range(1500):
        width, height = rng.randint(2, 60), rng.randint(1, 20)
        lines, x_range = _random_lines(rng, width, height)
        by_python = chart._Area(width, height)._dots_by_python(lines, x_range)
        by_numpy = chart._Area(width, height)._dots_by_numpy(lines, x_range)
        if by_python is not None:
            taken += 1
            assert sorted(by_python) == sorted(by_numpy), (lines, x_range, width, height)
    assert taken > 1000  # the Python route was what was compared, not its refusals


def test_a_range_that_is_not_finite_goes_to_numpy(any_size: None) -> None:
    line = Line([-5.0, 0.0], [1.0, 2.0], RED)
    assert chart._Area(10, 4)._dots_by_python([(line, (0.0, math.inf))], (-10.0, 0.0)) is None
    assert chart._Area(10, 4)._dots_by_python([(line, (-1e308, 1e308))], (-10.0, 0.0)) is None  # span: inf
    assert chart._Area(10, 4)._dots_by_python([(line, (0.0, 1.0))], (math.nan, 0.0)) is None


def test_large_inputs_go_to_numpy() -> None:
    many = [(Line(list(range(-200, 0)), [float(v % 2) * 100 for v in range(200)], RED), (0.0, 100.0))]
    assert chart._Area(40, 10)._dots_by_python(many, (-200.0, 0.0)) is None  # points
    spiky = [(Line([-3.0, -2.0, -1.0, 0.0], [0.0, 100.0, 0.0, 100.0], RED), (0.0, 100.0))]
    assert chart._Area(4, 200)._dots_by_python(spiky, (-3.0, 0.0)) is None  # dots


def test_charts_drawn_either_way_are_the_same(monkeypatch: pytest.MonkeyPatch, any_size: None) -> None:
    rng = random.Random(7)
    charts = []
    for _ in range(300):
        width, height = rng.randint(8, 90), rng.randint(4, 24)
        lines, x_range = _random_lines(rng, width, height)
        marks = [Line([x_range[0] / 2], [50.0], RED, marker="●")] if rng.random() < 0.2 else []
        charts.append((Chart(x_range=x_range, left_range=lines[0][1], left_ticks=([0.0, 50.0], ["0", "50"]),
                             x_ticks=([x_range[0], 0.0], ["-", "now"]),
                             lines=[line for line, _ in lines] + marks,
                             right_range=(0.0, 3000.0), right_ticks=([0.0, 3000.0], ["0", "3000"]),
                             ink=GREEN, canvas=(0, 0, 0)), width, height))
    fast = [render_chart(c, w, h) for c, w, h in charts]
    monkeypatch.setattr(chart._Area, "_dots_by_python", lambda *_: None)
    assert [render_chart(c, w, h) for c, w, h in charts] == fast


def test_floor_rounded_is_floor_of_numpys_rounding() -> None:
    rng = random.Random(3)
    values = [whole + nudge for whole in range(-300, 600)
              for nudge in (0.0, -1e-6, -5e-7, -1e-8, -5e-9, -4e-9, -1e-9, -1e-12, 1e-12, 0.5, 0.999999)]
    values += [rng.uniform(-400.0, 800.0) for _ in range(20000)]
    expected = np.floor(np.round(np.array(values), 8)).astype(np.int64).tolist()
    assert [chart._floor_rounded(v) for v in values] == expected


# ----------------------------------------------------------------------------- series and runs


def _history(rng: random.Random, rows: int, capacity: int) -> History:
    history = History(capacity)
    t = 0.0
    for _ in range(rows):
        t += rng.choice([1.0, 1.0, 1.0, 0.5, 7.0])
        load = rng.choice([None, math.nan, math.inf, rng.uniform(0, 100), rng.uniform(0, 100)])
        mhz = None if rng.random() < 0.1 else rng.randint(0, 3000)
        history.append(Sample(t_mono=t, gpu=Gpu(load, () if mhz is None else (mhz,)),
                              emc=Clocked(rng.uniform(0, 100), mhz)))
    return history


def _series_by_linspace(history: History, key: str, t_from: float | None, t_to: float | None,
                        buckets: int) -> tuple[np.ndarray, np.ndarray]:
    """The route the plots took before reading all their series at once (numpy's linspace, one
    key at a time)."""
    every = history.times(0, len(history))
    lo = 0 if t_from is None else int(np.searchsorted(every, t_from))
    hi = len(every) if t_to is None else int(np.searchsorted(every, math.nextafter(t_to, math.inf)))
    hi = max(lo, hi)
    times = every[lo:hi]
    values = history._gather(history._columns[key], lo, hi).astype(np.float64)
    count = hi - lo
    if count <= buckets:
        return times, values
    edges = np.linspace(0, count, buckets + 1).astype(np.int64)[:-1]
    sizes = np.diff(np.append(edges, count))
    finite = np.isfinite(values)
    sums = np.add.reduceat(np.where(finite, values, 0.0), edges)
    counts = np.add.reduceat(finite.astype(np.int64), edges)
    means = np.full(len(edges), np.nan)
    np.divide(sums, counts, out=means, where=counts > 0)
    return np.add.reduceat(times, edges) / sizes, means


def test_one_query_for_several_series_gives_each_series() -> None:
    rng = random.Random(11)
    keys = ["gpu_load", "gpu_mhz", "emc_mhz", "no_such_series"]
    checked = 0
    for _ in range(60):
        history = _history(rng, rng.randint(0, 700), rng.choice([50, 300, 1000]))  # some wrap
        newest = history.last_t_mono or 0.0
        for _ in range(8):
            t_from = rng.choice([None, newest - rng.uniform(0, 400)])
            t_to = rng.choice([None, newest, newest + 1.0, newest - rng.uniform(0, 200),
                               float(int(newest) - 3)])
            buckets = rng.choice([1, 2, 7, 52, 108, 2000])
            times, block = history.series_block(keys, t_from, t_to, buckets)
            assert block.shape == (len(keys), len(times))
            assert np.isnan(block[3]).all()  # a key without a column: no readings
            for row, key in enumerate(keys[:3]):
                want_times, want = _series_by_linspace(history, key, t_from, t_to, buckets)
                assert times.tobytes() == want_times.tobytes() and block[row].tobytes() == want.tobytes()
                checked += 1
    assert checked > 1000


@pytest.mark.parametrize(("rows", "buckets"), [(61, 7), (115, 7), (453, 7), (1000, 52)])
def test_the_last_bucket_ends_at_the_last_row(rows: int, buckets: int) -> None:
    """Where buckets * (rows / buckets) falls short of ``rows`` in floating point (61 rows in 7
    buckets), the last bucket still holds the last row, and its mean divides by its size."""
    history = _history(random.Random(rows), rows, rows)
    assert len(history) == rows
    times, block = history.series_block(["gpu_mhz"], None, None, buckets)
    want_times, want = _series_by_linspace(history, "gpu_mhz", None, None, buckets)
    assert times.tobytes() == want_times.tobytes() and block[0].tobytes() == want.tobytes()


def _segments_by_numpy(xs: np.ndarray, ys: np.ndarray, max_step: float | None) -> list[tuple[int, int]]:
    """The runs as the plots worked them out with numpy, as (first, last)."""
    finite = np.isfinite(ys)
    starts, ends = finite.copy(), finite.copy()
    if len(xs) > 1:
        broken = ~finite[:-1]
        if max_step is not None:
            broken |= np.diff(xs) > max_step
        starts[1:] &= broken
        ends[:-1] &= broken | ~finite[1:]
    return list(zip(np.flatnonzero(starts).tolist(), np.flatnonzero(ends).tolist(), strict=True))


def test_runs_and_the_gap_step_are_numpys() -> None:
    rng = random.Random(5)
    for _ in range(3000):
        count = rng.choice([0, 1, 2, 3, rng.randint(4, 150)])
        steps = [rng.choice([1.0, 1.0, 1.0, 0.5, 10.0, 0.0, rng.uniform(0, 50)]) for _ in range(count)]
        xs = np.cumsum(steps)
        if rng.random() < 0.05 and count:
            xs[rng.randrange(count)] = rng.choice([math.nan, math.inf])
        ys = np.array([rng.choice([1.0, 2.5, -3.0, 1e300, math.nan, math.inf, -math.inf])
                       for _ in range(count)])
        with np.errstate(invalid="ignore"):
            median = float(np.median(np.diff(xs))) if count > 2 else math.nan
        want_step = 3.0 * median if median > 0 else None
        assert _max_step(xs.tolist()) == want_step
        runs = _segments_by_numpy(xs, ys, want_step)
        got = _segments(xs.tolist(), ys.tolist(), want_step)
        assert repr(got) == repr([(xs[a:b + 1].tolist(), ys[a:b + 1].tolist()) for a, b in runs])
