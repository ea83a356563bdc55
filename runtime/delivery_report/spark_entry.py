"""Entry script for ``spark-submit`` (which runs a file, not a module).

``spark-submit --py-files delivery_report.zip runtime/delivery_report/spark_entry.py --input ...``
where the zip holds the ``runtime`` package; run from a checkout, the repository root is put
on the path instead so no zip is needed locally.
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    from runtime.delivery_report.cli import main
except ImportError:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from runtime.delivery_report.cli import main

if __name__ == "__main__":
    sys.exit(main())
