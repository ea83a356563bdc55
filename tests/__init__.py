"""Test suite. The environment is set here, before any test module starts jsii's Node process."""

import os
from pathlib import Path

os.environ.setdefault(
    "JSII_NODE", str(Path(__file__).resolve().parent.parent / "node_modules" / ".bin" / "node")
)
os.environ.setdefault(
    "JSII_RUNTIME_PACKAGE_CACHE_ROOT",
    str(Path(__file__).resolve().parent.parent / ".cache" / "jsii"),
)
os.environ.setdefault("CDK_DISABLE_CLI_TELEMETRY", "true")
