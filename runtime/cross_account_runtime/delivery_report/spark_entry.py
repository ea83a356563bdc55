"""Entry script for ``spark-submit`` (which runs a file, not a module).

``spark-submit --py-files runtime.zip spark_entry.py --input ...`` where the zip holds the
``cross_account_runtime`` package; run from a checkout, the folder holding the package is put
on the path instead so no zip is needed locally.
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    from cross_account_runtime.delivery_report.cli import main
except ImportError:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from cross_account_runtime.delivery_report.cli import main

if __name__ == "__main__":
    sys.exit(main())
