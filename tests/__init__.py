"""Test suite. The environment is set here, before any test module starts jsii's Node process."""

import os
from pathlib import Path

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
os.environ.setdefault(
    "JSII_RUNTIME_PACKAGE_CACHE_ROOT",
    str(Path(__file__).resolve().parent.parent / ".cache" / "jsii"),
)
os.environ.setdefault("CDK_DISABLE_CLI_TELEMETRY", "true")
