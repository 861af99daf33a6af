"""The committed leaderboard's suite (leaderboard/suite.yaml) and its committed results describe the same runs.

Nothing is run: the suite's grid gives, per cell and task, the configuration its results line records (task,
model name and adapter arguments, task arguments with their defaults); the committed results.jsonl files give
theirs. Both sets are equal, so `harness suite leaderboard/suite.yaml` on the committed results runs nothing new,
and a results line no cell would write cannot hide in the board.
"""

from __future__ import annotations

from collections import Counter

from conftest import REPO

from harness.plugins.registry import get_registry
from harness.results.records import read_records
from harness.suite.grid import cell_configurations, record_configuration, results_folder
from harness.suite.models import ModelPool
from harness.suite.spec import read_suite


def test_the_suites_grid_and_the_committed_results_are_the_same_set():
    suite = read_suite(REPO / "leaderboard" / "suite.yaml")
    pool = ModelPool(get_registry())
    grid: Counter = Counter()
    for cell in suite.cells():
        folder = results_folder(suite, cell.group).relative_to(REPO)
        grid.update(
            (str(folder), c)
            for c in cell_configurations(pool.registry, cell, cell.model.name, pool.recorded_args(cell))
        )
    committed: Counter = Counter()
    for path in sorted((REPO / "leaderboard" / "results").glob("*/results.jsonl")):
        records, problems = read_records(path)
        assert problems == []
        committed.update((str(path.parent.relative_to(REPO)), record_configuration(r)) for r in records)
    assert max(grid.values()) == 1 and max(committed.values()) == 1  # no configuration twice
    assert sorted(grid - committed) == [] and sorted(committed - grid) == []
    # 40 IKEA cells x 3 tasks, 3 x 4 CoMMuTE, 8 x 6 + 8 x 4 xling-shapes, 3 x 2 YiSi-2, 9 x 3 + 3 x 2 default benchmark
    assert len(grid) == 251
