"""``python -m runtime.delivery_report``: see ``cli.py``."""

from __future__ import annotations

import sys

from runtime.delivery_report.cli import main

sys.exit(main())
