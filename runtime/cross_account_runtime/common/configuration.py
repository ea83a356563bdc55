"""The one error every runtime component raises for configuration it cannot use.

The Lambda entry points catch exactly this class to tell a deployment mistake from a defect:
while the configuration is unusable they keep every message (the relay reports each record
failed, the SNS endpoint answers 500 so that SNS retries) and log the fix, instead of guessing
or dropping anything. One class for both, so a caller never has to know which component's
configuration it is reading.
"""

from __future__ import annotations


class ConfigurationError(ValueError):
    """A configuration is unusable; the message names the setting (usually an environment
    variable), the offending value and the fix."""
