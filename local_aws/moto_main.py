"""The local AWS server process: moto's server with this package's CloudFormation models and
its SQS time travel (:mod:`local_aws.moto_time_travel`).

``python -m local_aws.moto_main -H 127.0.0.1 -p PORT`` takes moto server's own arguments;
:class:`local_aws.moto_server.MotoServer` runs it. The models live in their own module because
moto names a model's service after its module, which ``__main__`` has not.
"""

from __future__ import annotations

import json
import sys

from moto.server import main as moto_main

from local_aws import moto_time_travel
from local_aws.moto_cloudformation import (
    DeliveryStreamResource,
    EmrServerlessApplicationResource,
)


def main(argv: list[str] | None = None) -> None:
    """Say which models and routes were added (in moto's log), then serve."""
    moto_time_travel.register()
    added = [
        DeliveryStreamResource.cloudformation_type(),
        EmrServerlessApplicationResource.cloudformation_type(),
    ]
    print(
        json.dumps(
            {
                "cloudformation_models_added": added,
                "routes_added": [moto_time_travel.AGE_MESSAGES_PATH],
            }
        ),
        file=sys.stderr,
        flush=True,
    )
    moto_main(argv)


if __name__ == "__main__":
    main()
