"""`ballastd` for scenario 1: every `pods/<name>/resize` patch it sends is logged
(`RESIZE-PATCH <unix time> <namespace>/<pod> <body>`),
and the first replica to send one dies with `os._exit(137)` right after the API server accepted it — before
anything else of that step (its Event, its log line) is written — as a SIGKILL at the worst moment would.

Test code only: the shipped `ballastd` has no such switch. Which replica crashes is settled by whoever creates
the marker file named in BALLAST_E2E_CRASH_MARKER first; the other runs on as a plain `ballastd`.

    python -m tests.e2e.crash_after_resize [ballastd arguments]
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from ballast.internal.cmd import ballastd
from ballast.runtime import objects
from ballast.runtime.client import SubResourceClient

MARKER_VARIABLE = "BALLAST_E2E_CRASH_MARKER"
PATCH_LINE = "RESIZE-PATCH"


def _first_to_crash(marker: str) -> bool:
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


def install(marker: str) -> None:
    original = SubResourceClient.patch

    def patch(
        self: SubResourceClient, obj: Any, body: Mapping[str, Any] | Sequence[Any] | bytes, **options: Any
    ) -> Any:
        answer = original(self, obj, body, **options)
        if self.subresource == "resize":
            pod = f"{objects.namespace(obj)}/{objects.name(obj)}"
            line = f"{PATCH_LINE} {time.time():.3f} {pod} {orjson.dumps(body).decode()}"
            print(line, file=sys.stderr, flush=True)
            if _first_to_crash(marker):
                os._exit(137)
        return answer

    SubResourceClient.patch = patch  # type: ignore[method-assign,assignment]


if __name__ == "__main__":
    install(os.environ[MARKER_VARIABLE])
    sys.exit(ballastd.main(sys.argv[1:]))
