"""The delivery-report job's assets for EMR Serverless: its entry script and its package.

``spark-submit`` runs a file, so the entry script is uploaded on its own; the package it
imports travels as ``--py-files``. Only the job goes in: not the Lambda functions' code, and
not the sample-data generator, which makes test data and never runs in a job.
"""

from __future__ import annotations

from pathlib import Path

from constructs_lib._private.staging import RUNTIME_PACKAGE, runtime_files, stage_files

JOB_PACKAGE = "delivery_report"
SAMPLE_GENERATOR = "delivery_report/sample"
ENTRY_SCRIPT = RUNTIME_PACKAGE / JOB_PACKAGE / "spark_entry.py"


def spark_job_package() -> Path:
    """The staged folder holding the runtime package's job modules only."""
    return stage_files(
        runtime_files(only=(JOB_PACKAGE,), leave_out=(SAMPLE_GENERATOR,)), "spark-job"
    )
