"""The declarative messaging topology: one document for every account's stack.

:func:`load_topology` and :func:`parse_topology` (``parsing``) check the document and build the
:class:`Topology` (``model``) the stacks, the access report and the local deployment read;
``topics`` and ``analytics`` hold those sections of the document.
"""

from stacks.topology.analytics import AnalyticsSettings
from stacks.topology.model import (
    Account,
    AlarmSettings,
    Endpoint,
    KeyGranularity,
    PlatformQueueKind,
    Route,
    Topology,
    TopologyError,
    relay_role_arn,
    relay_role_name,
)
from stacks.topology.parsing import load_topology, parse_topology
from stacks.topology.topics import Topic, TopicSubscription

__all__ = [
    "Account",
    "AlarmSettings",
    "AnalyticsSettings",
    "Endpoint",
    "KeyGranularity",
    "PlatformQueueKind",
    "Route",
    "Topic",
    "TopicSubscription",
    "Topology",
    "TopologyError",
    "load_topology",
    "parse_topology",
    "relay_role_arn",
    "relay_role_name",
]
