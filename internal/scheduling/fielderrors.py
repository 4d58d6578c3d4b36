"""Field errors in the API server's words, and the name checks they report on.

A policy's problems are shown to the person who wrote it next to the API server's own refusals (the CRD schema's,
and those a pod gets when the merged spec is wrong), so they read the same:

    invalid("spec.nodeName", "Node_1", message)  # 'spec.nodeName: Invalid value: "Node_1": <message>'
    unsupported("spec.tolerations[1].effect", "Sometimes", TAINT_EFFECTS)
    required("metadata.namespace")               # 'metadata.namespace: Required value'
    qualified_name_problems("a/b/c")             # why it is no label key, as apimachinery says it

The name checks restate apimachinery's `IsQualifiedName`, `IsValidLabelValue`, `IsDNS1123Subdomain` and
`IsDNS1123Label`, message for message (each returns every message that applies, [] when the name is fine).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

QUALIFIED_NAME_MAX_LENGTH = 63
LABEL_VALUE_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
DNS1123_LABEL_MAX_LENGTH = 63

_QUALIFIED_NAME_FORMAT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QUALIFIED_NAME_MESSAGE = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
_LABEL_VALUE_FORMAT = f"({_QUALIFIED_NAME_FORMAT})?"
_LABEL_VALUE_MESSAGE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
    "and end with an alphanumeric character"
)
_DNS1123_LABEL_FORMAT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_MESSAGE = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_FORMAT = rf"{_DNS1123_LABEL_FORMAT}(\.{_DNS1123_LABEL_FORMAT})*"
_DNS1123_SUBDOMAIN_MESSAGE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character"
)


def _regex_message(message: str, pattern: str, *examples: str) -> str:
    # apimachinery's RegexError, spacing included: "(e.g. 'MyName',  or 'my.name', regex used for validation is …)"
    shown = "".join(f"{' or ' if position else ''}'{example}', " for position, example in enumerate(examples))
    return f"{message} (e.g. {shown}regex used for validation is '{pattern}')"


def _too_long(limit: int) -> str:
    return f"must be no more than {limit} characters"


def quote(value: object) -> str:
    """`value` as a field error shows it: strings quoted (Go's `%q`), numbers and booleans bare, null as `null`,
    anything else as JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, ensure_ascii=False, default=str)


def invalid(path: str, value: object, detail: str) -> str:
    """`path: Invalid value: <value>: detail` (`field.Invalid`)."""
    return f"{path}: Invalid value: {quote(value)}: {detail}"


def required(path: str, detail: str = "") -> str:
    """`path: Required value[: detail]` (`field.Required`)."""
    return f"{path}: Required value: {detail}" if detail else f"{path}: Required value"


def forbidden(path: str, detail: str) -> str:
    """`path: Forbidden: detail` (`field.Forbidden`)."""
    return f"{path}: Forbidden: {detail}"


def unsupported(path: str, value: object, supported: Sequence[str]) -> str:
    """`path: Unsupported value: <value>: supported values: "a", "b"` (`field.NotSupported`)."""
    choices = ", ".join(quote(choice) for choice in supported)
    return f"{path}: Unsupported value: {quote(value)}: supported values: {choices}"


def dns1123_subdomain_problems(value: str) -> list[str]:
    """apimachinery's `IsDNS1123Subdomain`: object names, node names, scheduler names, label-key prefixes."""
    problems = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        problems.append(_too_long(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if re.fullmatch(_DNS1123_SUBDOMAIN_FORMAT, value) is None:
        problems.append(_regex_message(_DNS1123_SUBDOMAIN_MESSAGE, _DNS1123_SUBDOMAIN_FORMAT, "example.com"))
    return problems


def dns1123_label_problems(value: str) -> list[str]:
    """apimachinery's `IsDNS1123Label`: namespace names."""
    problems = []
    if len(value) > DNS1123_LABEL_MAX_LENGTH:
        problems.append(_too_long(DNS1123_LABEL_MAX_LENGTH))
    if re.fullmatch(_DNS1123_LABEL_FORMAT, value) is None:
        problems.append(_regex_message(_DNS1123_LABEL_MESSAGE, _DNS1123_LABEL_FORMAT, "my-name", "123-abc"))
    return problems


def qualified_name_problems(value: str) -> list[str]:
    """apimachinery's `IsQualifiedName`: label keys, topology keys, finalizer names. An optional DNS-subdomain
    prefix and `/`, then a name of at most 63 characters."""
    parts = value.split("/")
    if len(parts) > 2:
        return [
            "a qualified name "
            + _regex_message(_QUALIFIED_NAME_MESSAGE, _QUALIFIED_NAME_FORMAT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    problems = []
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            problems.append("prefix part must be non-empty")
        else:
            problems.extend(f"prefix part {message}" for message in dns1123_subdomain_problems(prefix))
    name = parts[-1]
    if not name:
        problems.append("name part must be non-empty")
    elif len(name) > QUALIFIED_NAME_MAX_LENGTH:
        problems.append(f"name part {_too_long(QUALIFIED_NAME_MAX_LENGTH)}")
    if re.fullmatch(_QUALIFIED_NAME_FORMAT, name) is None:
        problems.append(
            "name part "
            + _regex_message(_QUALIFIED_NAME_MESSAGE, _QUALIFIED_NAME_FORMAT, "MyName", "my.name", "123-abc")
        )
    return problems


def label_value_problems(value: str) -> list[str]:
    """apimachinery's `IsValidLabelValue`: empty, or at most 63 alphanumerics, `-`, `_`, `.` starting and ending
    with an alphanumeric."""
    problems = []
    if len(value) > LABEL_VALUE_MAX_LENGTH:
        problems.append(_too_long(LABEL_VALUE_MAX_LENGTH))
    if re.fullmatch(_LABEL_VALUE_FORMAT, value) is None:
        problems.append(_regex_message(_LABEL_VALUE_MESSAGE, _LABEL_VALUE_FORMAT, "MyValue", "my_value", "12345"))
    return problems
