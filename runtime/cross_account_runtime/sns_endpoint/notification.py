"""What the configured handler is given: a verified SNS notification.

The endpoint checks everything (topic, replay window, signature, deduplication) before it builds
a :class:`Notification`, so a handler sees only genuine, allowed, first-time messages. A handler
returning means done; raising means "deliver it again".
"""

from __future__ import annotations

from dataclasses import dataclass, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    NotificationHandler = Callable[["Notification"], object]
    """The configured handler: called with each notification; raises to have it retried."""


@dataclass(frozen=True)
class Notification:
    """A verified SNS notification, as given to the configured handler.

    ``envelope`` is the whole JSON body SNS posted (``MessageAttributes`` included).
    """

    message_id: str
    topic_arn: str
    message: str
    timestamp: str
    subject: str | None
    envelope: Mapping[str, object] = field(repr=False)

    @property
    def message_attributes(self) -> Mapping[str, object]:
        """The ``MessageAttributes`` object (name to ``{"Type", "Value"}``), empty if none."""
        attributes = self.envelope.get("MessageAttributes")
        return attributes if isinstance(attributes, dict) else {}
