"""The shard-key advice as words: the simulation's table and its recommendation.

Takes the plan ``queries.sharding.plan.simulate`` returns; ``hitboard shard-plan`` prints
``plan_lines``, and the Data page lays the same parts out as HTML.
"""

from __future__ import annotations


def percent(value: float) -> str:
    return f"{value:.0%}"


def times(value: float) -> str:
    return "inf" if value == float("inf") else f"{value:,.1f}x"


def plan_lines(plan) -> list[str]:
    """The table and the recommendation, as printed."""
    lines = [summary(plan).replace(". ", "\n", 1).rstrip("."), "",
             f"{'shard key':<48}{'chunks':>7}{'jumbo':>6}{'data max/min':>13}  "
             f"{'last day writes per shard':<28}{'max/min':>8}{'1-shard queries':>16}"]
    for key in plan.keys:
        shares = " / ".join(percent(s) for s in key.write_share)
        lines.append(
            f"{key.candidate.label:<48}{key.chunks:>7}{len(key.jumbo):>6}"
            f"{times(key.data_imbalance):>13}  {shares:<28}{times(key.write_imbalance):>8}"
            f"{percent(key.single_shard):>16}")
    lines += notes(plan)
    advice = recommendation(plan)
    return lines + ["", advice[0]] + [f"  {line}" for line in advice[1:]]


def summary(plan) -> str:
    day = plan.day.date().isoformat() if plan.day else "none"
    return (f"stats documents: {plan.data_bytes / 2**20:,.2f} MB of BSON; last day {day}; "
            f"{plan.queries:,} chart queries (today, 30 days, 12 months per page). "
            f"{plan.shards} shards, chunks of {plan.chunk_bytes / 2**20:,.3f} MB "
            f"({plan.chunk_rule}).")


def notes(plan) -> list[str]:
    """Warnings under the table: too few chunks, jumbo chunks."""
    lines = []
    if plan.keys and min(k.chunks for k in plan.keys) < 2 * plan.shards:
        lines.append("note: fewer chunks than the shards can share: a cluster would leave most "
                     "data where it is; a smaller --chunk-mb shows how it spreads as it grows")
    for key in plan.keys:
        if key.jumbo:
            shown = "; ".join(key.jumbo[:3]) + ("; ..." if len(key.jumbo) > 3 else "")
            lines.append(f"jumbo under {key.candidate.label}: {shown}")
    return lines


def recommendation(plan) -> list[str]:
    """The recommended key and why, then why not each other key."""
    best = plan.recommended
    if best is None or plan.queries == 0:
        return ["No stats documents to plan with: record some traffic first."]
    even = 1 / plan.shards
    lines = [
        f"Recommendation: {best.candidate.label} (hitboard shard --key {best.candidate.name}): "
        f"{percent(best.single_shard)} of chart queries reach a single shard, the busiest "
        f"shard takes {percent(max(best.write_share))} of the last day's writes "
        f"(even: {percent(even)}), {len(best.jumbo)} jumbo chunks.",
    ]
    for key in plan.keys:
        if key is not best:
            lines.append(f"not {key.candidate.label}: {_why_not(key, even)}")
    return lines


def _why_not(key, even: float) -> str:
    reasons = []
    if key.jumbo:
        reasons.append(f"{len(key.jumbo)} jumbo chunks that can neither split nor move")
    if key.single_shard < 0.5:
        reasons.append(f"only {percent(key.single_shard)} of chart queries reach one shard "
                       "(the rest are scatter-gather)")
    if max(key.write_share, default=0) > 1.5 * even:
        reasons.append(f"one shard takes {percent(max(key.write_share))} of the writes")
    return "; ".join(reasons) or "scores lower on targeted reads times even writes"


HEAD = ("Shard key", "Chunks", "Jumbo", "Data max/min", "Last day's writes per shard",
        "Writes max/min", "Queries on 1 shard")


def key_rows(plan) -> list[tuple[str, ...]]:
    """One row of cells per candidate key, under ``HEAD``."""
    return [(key.candidate.label, f"{key.chunks:,}", f"{len(key.jumbo):,}",
             times(key.data_imbalance), " / ".join(percent(s) for s in key.write_share),
             times(key.write_imbalance), percent(key.single_shard)) for key in plan.keys]
