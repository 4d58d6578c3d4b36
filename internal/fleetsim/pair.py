"""Ballast's run on two processes (`shards`): this one and a peer it starts, each with its own history store, in
lockstep; the trace is this process's, and the peer's must be the same (the run fails otherwise)."""

from __future__ import annotations

import contextlib
import hashlib
import multiprocessing
import pickle
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection

from ballast.internal.fleetsim.model import Fleet, Trace, Usage
from ballast.internal.fleetsim.operator import BallastOperator
from ballast.internal.fleetsim.run import Progress, simulate
from ballast.internal.fleetsim.shards import PEER_FAILED, Shard, ShardError, ShardLink

Load = Callable[[], tuple[Fleet, Usage]]
"""Builds the run's fleet and usage; called in each process (a picklable function: the peer is spawned)."""
PEER_EXIT_S = 30.0


def simulate_pair(load: Load, store_url: str, peer_store_url: str, progress: Progress | None = None) -> Trace:
    """Ballast's run over `load()`'s fleet, shared with a peer process (`shards`); the two stores must differ."""
    if store_url == peer_store_url:
        raise ValueError("the two processes of a run need history stores of their own")
    context = multiprocessing.get_context("spawn")  # nothing of this process's threads carried over
    ours, theirs = context.Pipe()
    peer = context.Process(target=_peer, args=(load, peer_store_url, theirs), name="ballast-shard-1", daemon=True)
    peer.start()
    theirs.close()
    link = ShardLink(Shard(0, 2), ours)
    try:
        fleet, usage = load()
        trace = simulate(fleet, usage, BallastOperator(fleet, store_url=store_url, link=link), progress)
        theirs_digest = link.receive()
        if theirs_digest != _digest(trace):
            raise ShardError("the two simulation processes ended with different traces")
        return trace
    finally:
        ours.close()
        peer.join(PEER_EXIT_S)
        if peer.is_alive():
            peer.terminate()


def _peer(load: Load, store_url: str, connection: Connection) -> None:
    """Process 1: the same run; sends its trace's digest at the end, or why it failed."""
    link = ShardLink(Shard(1, 2), connection)
    try:
        fleet, usage = load()
        trace = simulate(fleet, usage, BallastOperator(fleet, store_url=store_url, link=link))
        link.send(_digest(trace))
    except ShardError:
        pass  # process 0 went away first: it reports its own failure
    except KeyboardInterrupt:
        pass  # a terminal's Ctrl-C reaches the whole process group: process 0 stops the run
    except BaseException:  # any failure is process 0's to report, with this one's traceback
        with contextlib.suppress(OSError):  # process 0 went away too
            connection.send((PEER_FAILED, traceback.format_exc()))
        raise
    finally:
        connection.close()


def _digest(trace: Trace) -> str:
    return hashlib.sha256(pickle.dumps(trace, protocol=pickle.HIGHEST_PROTOCOL)).hexdigest()
