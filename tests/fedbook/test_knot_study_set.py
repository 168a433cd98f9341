"""KNOT's comparison runs shared between studies and spread over processes: the same runs, bit for bit."""

from __future__ import annotations

from fedbook.knot import comparison, runs


def test_one_training_for_several_erasure_times_gives_the_runs_of_each_alone(tiny_knot, same_knot_run):
    task, data = tiny_knot
    erasures = [(70.0, 300.0, (1, 2)), (25.0, 250.0, (1,))]  # the later one first: any order
    shared = runs.runs_with_erasures(task, data, "KNOT", 2, erasures=erasures)
    for (erase_time, horizon, counts), together in zip(erasures, shared, strict=True):
        alone = runs.runs_with_erasure(task, data, "KNOT", 2, erase_time=erase_time, horizon=horizon, counts=counts)
        assert len(together) == len(alone) == len(counts)
        for a, b in zip(together, alone, strict=True):
            same_knot_run(a, b)


def test_study_set_equals_separate_studies_for_any_n_jobs(tiny_knot, same_knot_run):
    task, data = tiny_knot
    early = {m: (1,) for m in ("FedBuff", "KNOT")}
    plans = [
        comparison.StudyPlan([task.name], fraction=comparison.LATE, methods=("FedAvg", "FedBuff", "KNOT")),
        comparison.StudyPlan([task.name], fraction=comparison.EARLY, methods=("FedBuff", "KNOT"), counts=early),
    ]
    one = comparison.study_set([task], [data], [0, 1], plans, n_jobs=1)
    two = comparison.study_set([task], [data], [0, 1], plans, n_jobs=2)
    late = comparison.studies([task], [data], [0, 1], methods=("FedAvg", "FedBuff", "KNOT"))
    early_alone = comparison.studies([task], [data], [0, 1], fraction=comparison.EARLY, methods=("FedBuff", "KNOT"),
                                     counts=early)  # fmt: skip
    for study_set in (two, [late, early_alone]):
        for mine, theirs in zip(one, study_set, strict=True):
            for a, b in zip(mine, theirs, strict=True):
                assert (a.task, a.erase_time, a.horizon) == (b.task, b.erase_time, b.horizon)
                same_knot_run(a.pilot, b.pilot)
                assert len(a.runs) == len(b.runs)
                for x, y in zip(a.runs, b.runs, strict=True):
                    same_knot_run(x, y)
    assert [r.method for r in one[0][0].runs] == ["FedAvg", "FedBuff", "FedBuff", "KNOT", "KNOT"] * 2
    assert [r.n_erased for r in one[1][0].runs] == [1, 1] * 2
