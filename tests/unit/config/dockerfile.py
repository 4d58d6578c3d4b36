"""A small Dockerfile reader for the tests: stages, their instructions, global ARG defaults, exec-form JSON.

Enough of the syntax for this repository's Dockerfile (comments, parser directives, `\\` continuations,
`${VAR}` in FROM); the unit tests check the image's promises with it and the packaging test runs its
ENTRYPOINT from the wheel, so both read the same file the same way.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from tests.paths import REPOSITORY

REPO = REPOSITORY
DOCKERFILE = REPO / "Dockerfile"
DOCKERIGNORE = REPO / ".dockerignore"


@dataclass(frozen=True, slots=True)
class Stage:
    """One FROM and the instructions after it, as (INSTRUCTION, arguments) pairs."""

    base: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def last(self, instruction: str) -> str | None:
        """The arguments of the stage's last `instruction` (the one that takes effect), or None."""
        found = [arguments for name, arguments in self.instructions if name == instruction]
        return found[-1] if found else None

    def copies(self) -> list[tuple[list[str], str]]:
        """(sources, destination) of every COPY from the build context (not `--from=`)."""
        result = []
        for name, arguments in self.instructions:
            if name != "COPY":
                continue
            words = arguments.split()
            if any(word.startswith("--from=") for word in words):
                continue
            paths = [word for word in words if not word.startswith("--")]
            result.append((paths[:-1], paths[-1]))
        return result


@dataclass(frozen=True, slots=True)
class Dockerfile:
    args: dict[str, str]
    """Defaults of the ARGs declared before the first FROM (usable in FROM lines)."""
    stages: list[Stage]

    @property
    def final(self) -> Stage:
        return self.stages[-1]

    def stage(self, name: str) -> Stage:
        return next(stage for stage in self.stages if stage.name == name)

    def entrypoint(self) -> list[str]:
        """The final stage's ENTRYPOINT, which must be in exec (JSON) form."""
        arguments = self.final.last("ENTRYPOINT")
        if arguments is None:
            raise ValueError("the final stage has no ENTRYPOINT")
        value = json.loads(arguments)
        if not (isinstance(value, list) and all(isinstance(word, str) for word in value)):
            raise ValueError(f"ENTRYPOINT {arguments!r} is not in exec form")
        return value


def _logical_lines(text: str) -> list[str]:
    lines: list[str] = []
    current = ""
    for raw in text.splitlines():
        stripped = raw.strip()
        if stripped.startswith("#") or (not stripped and not current):
            continue  # comments (and parser directives) and blank lines between instructions
        if stripped.endswith("\\"):
            current += stripped[:-1].strip() + " "
            continue
        lines.append(current + stripped)
        current = ""
    if current:
        lines.append(current.strip())
    return lines


def _substitute(text: str, values: dict[str, str]) -> str:
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: values.get(m[1] or m[2], ""), text)


def parse(path: Path = DOCKERFILE) -> Dockerfile:
    """Read a Dockerfile into its global ARG defaults and stages."""
    args: dict[str, str] = {}
    stages: list[Stage] = []
    for line in _logical_lines(path.read_text()):
        instruction, _, arguments = line.partition(" ")
        instruction = instruction.upper()
        arguments = arguments.strip()
        if instruction == "FROM":
            words = _substitute(arguments, args).split()
            words = [word for word in words if not word.startswith("--platform")]
            name = words[2] if len(words) >= 3 and words[1].upper() == "AS" else None
            stages.append(Stage(words[0], name))
        elif instruction == "ARG" and not stages:
            key, _, default = arguments.partition("=")
            args[key] = default
        elif stages:
            stages[-1].instructions.append((instruction, arguments))
        else:
            raise ValueError(f"{path}: {instruction} before the first FROM")
    return Dockerfile(args, stages)


def ignore_patterns(path: Path = DOCKERIGNORE) -> list[str]:
    """The .dockerignore patterns in order (comments and blank lines left out)."""
    return [line.strip() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]
