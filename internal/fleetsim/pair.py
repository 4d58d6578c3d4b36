"""Ballast's run on two processes (`shards`): this one and a peer it starts, each with its own history store, in
lockstep; the trace is this process's, and the peer's must be the same (the run fails otherwise)."""

from __future__ import annotations

import contextlib
import hashlib
import multiprocessing
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection

import orjson

from ballast.internal.fleetsim.model import Fleet, Trace, Usage
from ballast.internal.fleetsim.operator import BallastOperator
from ballast.internal.fleetsim.run import Progress, simulate
from ballast.internal.fleetsim.shards import Done, Failed, Shard, ShardError, ShardGoneError, ShardLink

Load = Callable[[], tuple[Fleet, Usage]]
"""Builds the run's fleet and usage; called in each process (a picklable function: the peer is spawned)."""
PEER_EXIT_S = 30.0
"""How long the peer may take to exit once the run is over (it has sent everything by then), before it is
terminated."""


def simulate_pair(load: Load, store_url: str, peer_store_url: str, progress: Progress | None = None) -> Trace:
    """Ballast's run over `load()`'s fleet, shared with a peer process (`shards`); the two stores must differ.
    Raises ShardError when the peer failed (with its traceback) or the two went apart."""
    if store_url == peer_store_url:
        raise ValueError("the two processes of a run need history stores of their own")
    context = multiprocessing.get_context("spawn")  # nothing of this process's threads carried over
    ours, theirs = context.Pipe()
    peer = context.Process(target=_peer, args=(load, peer_store_url, theirs), name="ballast-shard-1", daemon=True)
    peer.start()
    theirs.close()
    link = ShardLink(Shard(0), ours)
    try:
        fleet, usage = load()
        trace = simulate(fleet, usage, BallastOperator(fleet, store_url=store_url, link=link), progress)
        if link.receive(Done).digest != _digest(trace):
            raise ShardError("the two simulation processes ended with different traces")
        return trace
    finally:
        ours.close()
        peer.join(PEER_EXIT_S)
        if peer.is_alive():
            peer.terminate()
            peer.join()


def _peer(load: Load, store_url: str, connection: Connection) -> None:
    """Process 1: the same run; sends its trace's digest at the end, or its traceback when it fails."""
    link = ShardLink(Shard(1), connection)
    try:
        fleet, usage = load()
        trace = simulate(fleet, usage, BallastOperator(fleet, store_url=store_url, link=link))
        link.send(Done(_digest(trace)))
    except ShardGoneError:
        pass  # process 0 went away first: it reports why itself
    except KeyboardInterrupt:
        pass  # a terminal's Ctrl-C reaches the whole process group: process 0 stops the run
    except Exception:  # process 0 reports the failure (the two found apart here too), with this traceback
        with contextlib.suppress(ShardError):  # process 0 went away too
            link.send(Failed(traceback.format_exc()))
        raise SystemExit(1) from None
    finally:
        connection.close()


def _digest(trace: Trace) -> str:
    """The whole trace hashed by value (its dataclasses, mappings with sorted keys, arrays as lists of numbers):
    equal traces, equal digests, whichever objects each process's values happen to share. orjson writes NaN and
    infinities as null: traces differing only there would pass as equal, never equal ones as different."""
    return hashlib.sha256(orjson.dumps(trace, option=orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_SORT_KEYS)).hexdigest()
