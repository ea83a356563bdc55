"""What each asset ships of the runtime package: the functions get the runtime without the
Spark job; the job gets itself without the sample-data generator or the functions' code; and
every import of the package inside an asset finds its module in that asset; a relay's asset holds
what the relay imports and its configuration file, and runs on its own."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from aws_cdk import aws_lambda as lambda_

from constructs_lib._private.lambda_assets import NOT_IN_FUNCTIONS, relay_code
from constructs_lib._private.spark_assets import ENTRY_SCRIPT, spark_job_package
from constructs_lib._private.staging import RUNTIME_PACKAGE_NAME, runtime_files, stage_files

INGRESS = "arn:aws:sqs:us-east-1:222222222222:Billing-ingress"


def modules_in(folder: Path) -> set[str]:
    return {
        ".".join(path.relative_to(folder).with_suffix("").parts).removesuffix(".__init__")
        for path in folder.rglob("*.py")
    }


def package_imports(folder: Path) -> set[str]:
    """Every ``cross_account_runtime`` module the asset's code imports (at any depth)."""
    imported: set[str] = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            imported.update(n for n in names if n.startswith(RUNTIME_PACKAGE_NAME))
    return imported


def unresolved(folder: Path) -> set[str]:
    """Imports of the package naming neither a module of the asset nor a name in one."""
    modules = modules_in(folder)
    return {
        name
        for name in package_imports(folder)
        if name not in modules and name.rpartition(".")[0] not in modules
    }


def test_the_job_ships_without_the_sample_generator_or_the_functions() -> None:
    package = spark_job_package()
    modules = modules_in(package)
    job = f"{RUNTIME_PACKAGE_NAME}.delivery_report"
    assert f"{job}.cli" in modules
    assert f"{job}.spark_entry" in modules
    assert not any(m.startswith(f"{job}.sample") for m in modules)
    assert {m for m in modules if not m.startswith(job)} == {RUNTIME_PACKAGE_NAME}
    assert unresolved(package) == set()
    assert ENTRY_SCRIPT.name == "spark_entry.py"
    assert ENTRY_SCRIPT.is_file()


def test_functions_ship_the_runtime_without_the_job() -> None:
    package = stage_files(runtime_files(leave_out=NOT_IN_FUNCTIONS), "code")
    modules = modules_in(package)
    assert f"{RUNTIME_PACKAGE_NAME}.relay.config" in modules
    assert f"{RUNTIME_PACKAGE_NAME}.sns_endpoint.signature" in modules
    assert not any(m.startswith(f"{RUNTIME_PACKAGE_NAME}.delivery_report") for m in modules)
    assert unresolved(package) == set()


def test_a_relay_ships_the_modules_it_imports_and_its_configuration_file() -> None:
    code = relay_code("relay-config.json", '{"direction":"outbound"}')
    assert isinstance(code, lambda_.AssetCode)
    folder = Path(code.path)
    modules = modules_in(folder)
    assert f"{RUNTIME_PACKAGE_NAME}.relay.lambda_handler" in modules
    assert not any(m.startswith(f"{RUNTIME_PACKAGE_NAME}.sns_endpoint") for m in modules)
    assert unresolved(folder) == set()
    assert (folder / "relay-config.json").read_text(encoding="utf-8") == '{"direction":"outbound"}'


def test_the_relays_asset_alone_runs_the_relay_with_its_configuration(tmp_path: Path) -> None:
    """As in Lambda: only the asset on the path (boto3 loads with the first send), the file
    read from LAMBDA_TASK_ROOT at the first invocation."""
    configuration = json.dumps(
        {
            "direction": "outbound",
            "routes": {"Billing": {"destination": INGRESS, "deadLetterQueue": "Billing-dlq"}},
            "localEndpoints": ["Sales"],
        }
    )
    code = relay_code("relay-config.json", configuration)
    assert isinstance(code, lambda_.AssetCode)
    probe = (
        "import sys; from cross_account_runtime.relay import lambda_handler; "
        "relay = lambda_handler._default_relay(); "
        "print(sorted(relay.config.routes), 'boto3' in sys.modules, "
        f"lambda_handler.__file__.startswith({code.path!r}))"
    )
    result = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {code.path!r}); {probe}"],
        cwd=tmp_path,
        env={
            "LAMBDA_TASK_ROOT": code.path,
            "RELAY_CONFIGURATION": "relay-config.json",
            "RELAY_HOME": "arn:aws:sqs:us-east-1:111111111111",
        },
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.split() == [
        "['arn:aws:sqs:us-east-1:111111111111:Billing']",
        "False",
        "True",
    ]
