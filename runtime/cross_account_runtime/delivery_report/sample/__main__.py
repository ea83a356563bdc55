"""``python -m cross_account_runtime.delivery_report.sample``: see ``cli.py``."""

from __future__ import annotations

import sys

from cross_account_runtime.delivery_report.sample.cli import main

sys.exit(main())
