"""Past one machine: the same cases on a Dask LocalCluster (two worker processes) and on Ray give
the same rows as in process; the driver keeps the limit, the store and the checks."""

from __future__ import annotations

import os
from unittest import mock

import pytest
from evals_helpers import shop

from agentnb.evals import Case, check

CASES = [Case(item, id=item, expected=item) for item in ("milk", "candy", "boom", "tea", "fail", "bread")]
CHECKS = [
    check.called("add_item"),
    check.state("/items", contains=check.EXPECTED, name="stored"),
    check.changed_by("/items", "tool:add_item"),
]
COLUMNS = [
    "case_id",
    "repeat",
    "input",
    "answer",
    "status",
    "passed",
    "called:add_item",
    "stored",
    "changed_by:/items:tool:add_item",
    "input_tokens",
    "output_tokens",
    "error",
]


def _same_rows(remote, local):
    assert remote.frame()[COLUMNS].equals(local.frame()[COLUMNS])
    assert remote.checks().equals(local.checks())
    assert [r.turns[-1].state_after for r in remote] == [r.turns[-1].state_after for r in local]


def test_a_dask_local_cluster_gives_the_same_rows_as_in_process(tmp_path):
    distributed = pytest.importorskip("distributed")
    local = shop().evaluate(CASES, CHECKS, name="local", folder=tmp_path)
    with (
        # A nanny sets its workers' environment (PYTHONHASHSEED, OMP_NUM_THREADS, ...) in this
        # process's before it starts them, and leaves it there: the processes later tests start
        # would inherit it.
        mock.patch.dict(os.environ),
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        remote = shop().evaluate(
            CASES, CHECKS, name="dask", folder=tmp_path, executor=client.get_executor(), concurrency=4
        )
        workers = set(client.run(lambda: __import__("os").getpid()).values())
    _same_rows(remote, local)
    assert len(workers) == 2 and __import__("os").getpid() not in workers
    assert (tmp_path / "evals" / "dask" / "cases.jsonl").read_text().count("\n") == len(
        CASES
    )  # the driver wrote every line


@pytest.mark.ray
def test_ray_gives_the_same_rows_as_in_process(tmp_path, request):
    if "ray" not in (request.config.getoption("-m") or "") and not os.environ.get("AGENTNB_RAY"):
        pytest.skip("Ray starts slowly: opt in with -m ray (or AGENTNB_RAY=1)")
    pytest.importorskip("ray")
    from agentnb.evals.ray import RayExecutor

    local = shop().evaluate(CASES, CHECKS, name="local", folder=tmp_path)
    import ray

    # The node's address is given: Ray finds it by connecting towards a public address, which the
    # tests' loopback guard refuses, and the node then waits for itself at another address.
    # Ray's workers start afresh (a Dask worker inherits sys.path): they import the tests' tools
    # module from the tests' folder, as a user's workers would import a user's module.
    here = os.path.dirname(os.path.abspath(__file__))
    init = {
        "num_cpus": 2,
        "include_dashboard": False,
        "_node_ip_address": "127.0.0.1",
        "runtime_env": {"env_vars": {"PYTHONPATH": here}},
    }
    executor = RayExecutor(init=init)
    try:
        remote = shop().evaluate(CASES, CHECKS, name="ray", folder=tmp_path, executor=executor, concurrency=2)
        workers = set(
            ray.get([ray.remote(num_cpus=1)(lambda: __import__("os").getpid()).remote() for _ in range(4)])
        )
    finally:
        executor.shutdown()
        ray.shutdown()
    _same_rows(remote, local)
    assert os.getpid() not in workers  # the cases ran in Ray's worker processes, not here
    assert (tmp_path / "evals" / "ray" / "cases.jsonl").read_text().count("\n") == len(CASES)


def test_copies_of_a_server_model_share_one_instance_per_process():
    import pickle

    from agentnb.evals.engine.worker import case_model
    from agentnb.models import OpenAIChat

    model = OpenAIChat("gpt-x", base_url="http://127.0.0.1:9/v1", max_retries=0)
    first = case_model(pickle.loads(pickle.dumps(model)))
    assert case_model(pickle.loads(pickle.dumps(model))) is first  # one client for every case of a worker
    assert (
        case_model(OpenAIChat("gpt-x", base_url="http://127.0.0.1:9/v1", max_retries=0, api_key="k1"))
        is not first
    )
    assert case_model(OpenAIChat("gpt-y", base_url="http://127.0.0.1:9/v1", max_retries=0)) is not first
