"""A CronJob-like kind embedding built-in types, shared by the unit and the real-API-server tests of
`crd.builtin`."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from ballast.runtime.crd import CustomResource, JobTemplateSpec, ObjectReference, Scope, WireModel


class CronTabSpec(WireModel):
    schedule: str
    job_template: JobTemplateSpec


class CronTabStatus(WireModel):
    active: list[ObjectReference] | None = None


class CronTab(CustomResource):
    """A CronJob-like kind."""

    GROUP: ClassVar[str] = "builtin.example.com"
    VERSION: ClassVar[str] = "v1"
    KIND: ClassVar[str] = "CronTab"
    PLURAL: ClassVar[str] = "crontabs"
    SCOPE: ClassVar[Scope] = "Namespaced"
    STATUS_SUBRESOURCE: ClassVar[bool] = True

    spec: CronTabSpec
    status: CronTabStatus = Field(default_factory=CronTabStatus)
