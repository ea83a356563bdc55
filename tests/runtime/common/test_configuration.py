"""The relay and the SNS endpoint raise one ConfigurationError, so an entry point or a caller
catches a deployment mistake the same way whichever component it configures."""

from __future__ import annotations

import pytest

from cross_account_runtime.common.configuration import ConfigurationError
from cross_account_runtime.relay.config import RelayConfig
from cross_account_runtime.sns_endpoint.config import EndpointConfig


def test_the_relay_and_the_endpoint_raise_the_same_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="RELAY_CONFIGURATION is not set"):
        RelayConfig.from_environment({})
    with pytest.raises(ConfigurationError, match="SNS_ENDPOINT_DEDUPE_TABLE is not set"):
        EndpointConfig.from_environment({})


def test_a_configuration_error_is_a_value_error() -> None:
    """Callers that already catch ValueError for bad input keep working."""
    assert issubclass(ConfigurationError, ValueError)
