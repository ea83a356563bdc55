"""Lambda's limit on a function's environment, counted at synth.

Lambda refuses a function whose variables exceed 4 KB together (keys and values, the form
``CreateFunction`` takes them in), and CloudFormation only says so while deploying, after the
account's other resources changed. So a construct counts its variables when it builds them.
Values that CloudFormation resolves (a queue's ``Fn::GetAtt``) are tokens at synth; each is
counted at the longest an SQS queue ARN can be, so that the count never falls short.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from aws_cdk import Tokenization

LAMBDA_ENVIRONMENT_LIMIT_BYTES: Final = 4_096
"""Lambda's quota: "4 KB, for all environment variables associated with the function, in
aggregate"."""

LONGEST_QUEUE_ARN: Final = len("arn:aws-iso-b:sqs:") + 16 + len(":123456789012:") + 80
"""The longest SQS queue ARN: the longest partition name, a region name of 16 characters (the
longest today, ``us-isof-south-1``, has 15), a 12-digit account and an 80-character queue name;
the bound for a value only CloudFormation knows."""


_STRING_TOKEN: Final = re.compile(r"\$\{Token\[[^\]]*\]\}")
"""How aws-cdk-lib writes a token into a string (``${Token[...]}``, its
``BEGIN_STRING_TOKEN_MARKER`` and ``END_TOKEN_MARKER``)."""

_PER_VARIABLE: Final = len('"":"",')
"""What a variable adds beyond its key and value in the JSON Lambda stores (counted, so that
the estimate holds whichever way Lambda measures)."""


def environment_size(environment: Mapping[str, str]) -> int:
    """The bytes ``environment`` takes once deployed, at most: every key and value, each token
    in a value counted as :data:`LONGEST_QUEUE_ARN`."""
    size = 0
    for key, value in environment.items():
        tokens = len(Tokenization.reverse_string(value).tokens)
        size += len(key.encode()) + _PER_VARIABLE
        size += len(_STRING_TOKEN.sub("", value).encode()) + LONGEST_QUEUE_ARN * tokens
    return size
