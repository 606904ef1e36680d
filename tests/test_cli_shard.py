"""``hitboard shard-plan`` and ``hitboard shard`` from the command line."""

from __future__ import annotations

import datetime as dt

from click.testing import CliRunner

import queries
from dashboard.cli import main

DAY = dt.datetime(2026, 11, 21, tzinfo=dt.UTC)


def _store(tmp_path) -> str:
    store = str(tmp_path / "store")
    db = queries.connect(store)
    queries.ensure_indexes(db)
    for page in ("/a", "/b", "/c"):
        for day in range(3):
            queries.log_hit(db, DAY - dt.timedelta(days=day), "s", page)
    db.client.close()
    return store


def test_shard_plan_prints_the_table_and_a_recommendation(tmp_path):
    result = CliRunner().invoke(main, ["shard-plan", "--shards", "3", "--store",
                                       _store(tmp_path)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "3 shards" in lines[1]
    for label in ("{metadata.site, metadata.page}", "hashed _id", "{metadata.date} (time)"):
        assert any(line.startswith(label) for line in lines)
    assert any(line.startswith("Recommendation: ") for line in lines)


def test_shard_plan_refuses_a_bad_chunk_size(tmp_path):
    result = CliRunner().invoke(main, ["shard-plan", "--chunk-mb", "0", "--store",
                                       _store(tmp_path)])
    assert result.exit_code == 2 and "--chunk-mb" in result.output


def test_shard_without_apply_prints_the_commands(tmp_path):
    result = CliRunner().invoke(main, ["shard", "--key", "site-page-date", "--store",
                                       _store(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "this store is embedded" in result.output
    assert 'runCommand({"shardCollection": "hitboard.stats.monthly", "key": ' \
           '{"metadata.site": 1, "metadata.page": 1, "metadata.date": 1}})' in result.output


def test_shard_apply_without_a_cluster_exits_2(tmp_path):
    result = CliRunner().invoke(main, ["shard", "--key", "site-page", "--apply", "--store",
                                       _store(tmp_path)])
    assert result.exit_code == 2
    assert "Error: cannot shard on the embedded store" in result.output
