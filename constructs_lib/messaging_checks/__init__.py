"""``MessagingChecks``, the cdk-nag pack of what makes messages undeliverable (needs cdk-nag,
the package's ``gates`` extra): the pack in :mod:`.pack`, its rules by service in
:mod:`.sns_rules`, :mod:`.sqs_rules` and :mod:`.lambda_rules`, over the template reading of
``_template`` and the policy reading of ``_policy``."""

from constructs_lib.messaging_checks._rule import PACK_NAME
from constructs_lib.messaging_checks.pack import RULES, MessagingChecks

__all__ = ["PACK_NAME", "RULES", "MessagingChecks"]
