"""``DeliveryLoggedTopic``: an SNS topic whose every delivery failure is on record.

A misconfigured cross-account policy makes SNS drop a message silently unless delivery-status
logging is on for that protocol; so this topic logs every protocol it has subscribers on, into
log groups it creates first (SNS would create them with no retention), through a role that only
this topic can use and that may only write to those groups.

Split as aws-cdk-lib splits ``aws-sns``: :mod:`.topic_base` (what the other constructs take),
:mod:`.topic` (the construct), :mod:`.imported` (the topics that exist already) and
:mod:`.validate_keywords` (the checks of its keywords).
"""

from constructs_lib.delivery_logged_topic.topic import DeliveryLoggedTopic
from constructs_lib.delivery_logged_topic.topic_base import DeliveryProtocol, IDeliveryLoggedTopic

__all__ = ["DeliveryLoggedTopic", "DeliveryProtocol", "IDeliveryLoggedTopic"]
