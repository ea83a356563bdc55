"""Shared fixtures: the example topology, its synthesized assembly, the local AWS, and the
run's one Spark session (starting one costs a JVM and ~10 s); and how the tests share out over
parallel workers (``pytest -n 2 --dist loadgroup``, as ``scripts/test.sh`` runs them)."""

from __future__ import annotations

import copy
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from local_aws.moto.server import MotoServer
from stacks.app_builder import topology_from_context
from stacks.checks import gates
from stacks.placement.plan import committed_plan
from stacks.placement.plan_file import PlanFile

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def example_document() -> dict[str, Any]:
    """The topology document in cdk.json's context (the seed's Sales/Billing/error example)."""
    document: dict[str, Any] = json.loads((ROOT / "cdk.json").read_text())["context"]["topology"]
    return document


@pytest.fixture
def document(example_document: dict[str, Any]) -> dict[str, Any]:
    """A copy of the example a test may change."""
    return copy.deepcopy(example_document)


@pytest.fixture(scope="session")
def example_assembly(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example synthesized once per run through its committed plan (``cdk.stacks``), with
    cdk-nag attached (synth fails on a finding)."""
    outdir = tmp_path_factory.mktemp("example") / "cdk.out"
    topology = topology_from_context(None)
    return gates.synth(topology, committed_plan(topology, PlanFile()), outdir)


@pytest.fixture(scope="session")
def moto_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """moto in server mode on 127.0.0.1 for the whole run; stopped at the end."""
    with MotoServer(tmp_path_factory.mktemp("moto") / "moto.log") as server:
        yield server.endpoint_url


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """A ``local[2]`` session in UTC for every test that needs one; stopped at the end."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master("local[2]")
        .appName("delivery-report-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        # Short jobs on small inputs: HotSpot's second compiler (C2) spends the CPU the other
        # worker needs on code that runs for seconds. C1 alone, and the serial collector the
        # job uses locally, cut a session's start and first job from 17.0 s to 12.6 s here.
        .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


SPARK_GROUP = "spark"
EXAMPLE_GROUP = "example-deployment"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Keep together, on one worker, what shares an expensive session fixture: every test that
    needs the Spark session (a JVM each), and every test that needs the example deployed (a
    deployment each); every other module stays whole on one worker, since its module-scoped
    fixtures (a synthesized app, a deployment of its own) would otherwise be built twice.

    First among the hooks: pytest-xdist's own reads the groups into the test ids (for
    ``--dist loadgroup``) in this same hook, and a group added after it is ignored."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if "spark" in fixtures:
            group = SPARK_GROUP
        elif "example_deployment" in fixtures:
            group = EXAMPLE_GROUP
        else:
            group = item.nodeid.split("::", 1)[0]
        item.add_marker(pytest.mark.xdist_group(group))
