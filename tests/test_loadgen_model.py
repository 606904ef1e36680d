"""The traffic model: realistic names, Zipf popularity, diurnal cycle, determinism."""

import datetime as dt

import numpy as np
import pytest

from queries import HitboardError, validation
from queries.loadgen.model import TrafficModel, page_names, zipf_weights

DAY = dt.datetime(2026, 11, 21, tzinfo=dt.UTC)


def test_page_names_are_realistic_distinct_and_valid():
    names = page_names(200, seed=3)
    assert names[0] == "/"
    assert len(set(names)) == 200
    assert {n.split("/")[1] for n in names[1:]} == {"blog", "products", "static"}
    assert all(validation.page(n) == n for n in names)


def test_same_seed_same_model_and_counts_other_seed_differs():
    a, b, c = TrafficModel(seed=7), TrafficModel(seed=7), TrafficModel(seed=8)
    assert a.page_names == b.page_names
    assert a.page_names != c.page_names
    assert np.array_equal(a.day_counts(1, DAY, 50), b.day_counts(1, DAY, 50))
    assert not np.array_equal(a.day_counts(1, DAY, 50), c.day_counts(1, DAY, 50))
    assert np.array_equal(a.sample(np.random.default_rng(1), 1e4),
                          b.sample(np.random.default_rng(1), 1e4))


def test_site_names_are_reserved_example_names():
    model = TrafficModel(sites=10)
    assert all(s.endswith(".example") for s in model.site_names)
    assert len(set(model.site_names)) == 10


def test_zipf_weights_rank_pages_and_zero_exponent_is_uniform():
    w = zipf_weights(10, 1.0)
    assert w.sum() == pytest.approx(1.0)
    assert w[0] / w[1] == pytest.approx(2.0)
    assert np.allclose(zipf_weights(4, 0.0), 0.25)


def test_weights_cover_all_traffic_with_first_site_biggest():
    model = TrafficModel(sites=3, pages=5)
    assert model.weights.shape == (3, 5)
    assert model.weights.sum() == pytest.approx(1.0)
    assert model.weights[0].sum() > model.weights[1].sum() > model.weights[2].sum()
    assert len(model.cells()) == 15


def test_diurnal_cycle_averages_to_one_and_peaks_in_the_afternoon():
    model = TrafficModel(diurnal=0.5)
    factors = model.minute_factors()
    assert factors.mean() == pytest.approx(1.0)
    assert factors.argmax() // 60 == 14 or factors.argmax() // 60 == 15
    assert model.diurnal_factor(DAY.replace(hour=15)) == pytest.approx(1.5)
    assert model.diurnal_factor(DAY.replace(hour=3)) == pytest.approx(0.5)
    assert np.allclose(TrafficModel(diurnal=0).minute_factors(), 1.0)


def test_day_counts_follow_the_rate_and_stop_at_until():
    model = TrafficModel(sites=1, pages=4, diurnal=0.3)
    counts = model.day_counts(0, DAY, rate=10)
    assert counts.shape == (4, 1440)
    assert counts.sum() == pytest.approx(10 * 86400, rel=0.01)
    assert counts[0].sum() > counts[3].sum()
    until = DAY + dt.timedelta(hours=6, minutes=30, seconds=15)
    partial = model.day_counts(0, DAY, rate=10, until=until)
    assert partial[:, 391:].sum() == 0
    assert np.array_equal(partial[:, :390], counts[:, :390])
    assert 0 < partial[:, 390].sum() < counts[:, 390].sum()  # a quarter of that minute
    assert np.all(partial[:, 390] <= counts[:, 390])


@pytest.mark.parametrize("kwargs", [{"sites": 0}, {"pages": 10_000}, {"zipf_s": -1},
                                    {"diurnal": 1.0}, {"seed": -1}, {"sites": "2"}])
def test_bad_parameters_are_refused_clearly(kwargs):
    with pytest.raises(HitboardError):
        TrafficModel(**kwargs)
