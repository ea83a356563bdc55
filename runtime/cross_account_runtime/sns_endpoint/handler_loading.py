"""Importing the notification handler named by ``SNS_ENDPOINT_HANDLER``.

The handler is the deployer's code, packaged beside the runtime; the endpoint finds it by a
``package.module:function`` path, as Lambda finds its own handler. Every way the path can be
wrong is a :class:`~cross_account_runtime.common.configuration.ConfigurationError` naming the
variable and the fix, raised on the container's first delivery, so the endpoint answers 500 and
SNS keeps the messages until the deployment is fixed.
"""

from __future__ import annotations

import importlib

from cross_account_runtime.common.configuration import ConfigurationError
from cross_account_runtime.sns_endpoint.config import ENV_HANDLER

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cross_account_runtime.sns_endpoint.notification import NotificationHandler


def handler_parts(path: str) -> tuple[str, str]:
    """``"package.module:function"`` as its module and its attribute path, or the reason it
    is neither (the construct checks a handler at synth with this very rule)."""
    module_name, separator, attribute = path.partition(":")
    if not separator or not module_name or not attribute:
        raise ConfigurationError(
            f"{path!r} is not 'package.module:function'; name the module, a colon, then the "
            "function to call with each notification"
        )
    return module_name, attribute


def load_notification_handler(path: str) -> NotificationHandler:
    """Import ``"package.module:function"`` (the function may be ``Class.method``)."""
    try:
        module_name, attribute = handler_parts(path)
    except ConfigurationError as error:
        raise ConfigurationError(f"{ENV_HANDLER}: {error}") from None
    try:
        target: object = importlib.import_module(module_name)
    except ImportError as error:
        raise ConfigurationError(
            f"{ENV_HANDLER}: cannot import module {module_name!r} ({error}); check the name and "
            "that the module is in the deployment package"
        ) from error
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ConfigurationError(
                f"{ENV_HANDLER}: module {module_name!r} has no {attribute!r}; check the name "
                "after the colon"
            ) from None
    if not callable(target):
        raise ConfigurationError(f"{ENV_HANDLER}: {path!r} is not callable")
    handler: NotificationHandler = target
    return handler
