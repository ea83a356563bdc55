"""What every CloudFormation model the local AWS adds to moto shares: its type, the property
that names it, its physical id and its ``Fn::GetAtt`` attributes; and, for the types AWS
replaces on an update, the replacement.

An attribute a model does not have fails the stack with moto's "does not support attribute
type" error; moto would otherwise log a warning and resolve it to nothing, and a template that
reads a missing attribute would deploy here and fail in AWS.

A mixin, not a base class: moto's CloudFormation registers only the *direct* subclasses of its
``CloudFormationModel`` (``get_model_list`` in ``moto/cloudformation/parsing.py``), so each model
names both, these first: ``class Model(ResourceModel, CloudFormationModel)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from moto.cloudformation.exceptions import UnformattedGetAttTemplateException


class ResourceModel:
    """A resource type moto's CloudFormation creates through one of our models."""

    TYPE: ClassVar[str]
    """The CloudFormation resource type, ``AWS::<Service>::<Resource>``."""
    NAME_PROPERTY: ClassVar[str] = ""
    """The template property that names the resource ("" where none does)."""
    ATTRIBUTES: ClassVar[frozenset[str]]
    """The attributes ``Fn::GetAtt`` may read."""

    def __init__(self, physical_id: str, attributes: Mapping[str, str]) -> None:
        if set(attributes) != self.ATTRIBUTES:
            raise ValueError(f"{self.TYPE}: attributes {sorted(attributes)} are not its own")
        self._physical_id = physical_id
        self._attributes = dict(attributes)

    @classmethod
    def cloudformation_type(cls) -> str:
        return cls.TYPE

    @classmethod
    def cloudformation_name_type(cls) -> str:
        return cls.NAME_PROPERTY

    @classmethod
    def has_cfn_attr(cls, attr: str) -> bool:
        return attr in cls.ATTRIBUTES

    @classmethod
    def resource_name(cls, logical_id: str, cloudformation_json: Mapping[str, Any]) -> str:
        """The name the template gives the resource, else its logical id (as moto names a
        resource the template leaves unnamed)."""
        properties = cloudformation_json.get("Properties", {})
        name: str = (properties.get(cls.NAME_PROPERTY) if cls.NAME_PROPERTY else None) or logical_id
        return name

    @property
    def physical_resource_id(self) -> str:
        return self._physical_id

    def get_cfn_attribute(self, attribute_name: str) -> str:
        if attribute_name not in self._attributes:
            raise UnformattedGetAttTemplateException()
        return self._attributes[attribute_name]


class ReplacedOnUpdate:
    """An update that deletes the old resource before creating the new one from the new
    template (for a policy, the old document is removed before the new one is stored)."""

    @classmethod
    def update_from_cloudformation_json(
        cls,
        original_resource: Any,
        new_resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
    ) -> Any:
        original_resource.delete(account_id, region_name)
        create = cls.create_from_cloudformation_json  # type: ignore[attr-defined]
        return create(new_resource_name, cloudformation_json, account_id, region_name)
