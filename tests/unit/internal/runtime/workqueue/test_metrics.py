"""The workqueue_* metrics, read back from the runtime's registry as Prometheus would scrape them."""

from __future__ import annotations

import gc
import itertools
import threading
from collections.abc import Callable

import pytest
from prometheus_client import generate_latest

from ballast.runtime import FakeClock
from ballast.runtime.metrics import REGISTRY
from ballast.runtime.priorityqueue import PriorityQueue
from ballast.runtime.workqueue import Queue, RateLimitingQueue
from tests.unit.internal.runtime.workqueue.support import QueueFactory, drain

_names = itertools.count()


def fresh_name() -> str:
    # The registry is process-wide; every test gets series of its own.
    return f"metrics-test-{next(_names)}"


def sample(metric: str, name: str, **labels: str) -> float | None:
    return REGISTRY.get_sample_value(metric, {"name": name, "controller": name, **labels})


def series_names(metric: str) -> set[str]:
    return {s.labels["name"] for family in REGISTRY.collect() for s in family.samples if s.name == metric}


def test_a_named_plain_queue_reports_adds_depth_and_durations(
    make_rate_limiting_queue: Callable[..., RateLimitingQueue[str]], clock: FakeClock
) -> None:
    name = fresh_name()
    queue = make_rate_limiting_queue(name=name)
    assert sample("workqueue_adds_total", name) == 0.0
    assert sample("workqueue_depth", name, priority="") == 0.0
    queue.add("a")
    queue.add("b")
    queue.add("a")  # deduplicated: not an add
    assert sample("workqueue_adds_total", name) == 2.0
    assert sample("workqueue_depth", name, priority="") == 2.0
    clock.advance(2.0)
    assert queue.get(timeout=0) == ("a", False)
    assert sample("workqueue_depth", name, priority="") == 1.0
    assert sample("workqueue_queue_duration_seconds_count", name) == 1.0
    assert sample("workqueue_queue_duration_seconds_sum", name) == 2.0
    assert sample("workqueue_queue_duration_seconds_bucket", name, le="1.0") == 0.0
    assert sample("workqueue_queue_duration_seconds_bucket", name, le="10.0") == 1.0
    assert sample("workqueue_queue_duration_seconds_bucket", name, le="+Inf") == 1.0
    clock.advance(3.0)
    queue.done("a")
    assert sample("workqueue_work_duration_seconds_count", name) == 1.0
    assert sample("workqueue_work_duration_seconds_sum", name) == 3.0
    assert sample("workqueue_work_duration_seconds_bucket", name, le="1.0") == 0.0
    assert sample("workqueue_work_duration_seconds_bucket", name, le="10.0") == 1.0


def test_an_item_re_added_while_processing_counts_in_the_depth(
    make_rate_limiting_queue: Callable[..., RateLimitingQueue[str]],
) -> None:
    # client-go's depth counts dirty keys, including one held back for its worker.
    name = fresh_name()
    queue = make_rate_limiting_queue(name=name)
    queue.add("a")
    queue.get(timeout=0)
    queue.add("a")
    assert len(queue) == 0
    assert sample("workqueue_depth", name, priority="") == 1.0
    assert sample("workqueue_adds_total", name) == 2.0


@pytest.mark.parametrize(
    ("calls", "retries"),
    [
        ([("add_after", 0.0)], 1.0),  # counted before the zero-delay shortcut
        ([("add_after", 1.0), ("add_after", 2.0)], 2.0),
        ([("add_rate_limited", 0.0)], 1.0),
        ([("add", 0.0)], 0.0),
    ],
)
def test_the_plain_queue_counts_a_retry_for_every_add_after(
    make_rate_limiting_queue: Callable[..., RateLimitingQueue[str]], calls: list[tuple[str, float]], retries: float
) -> None:
    name = fresh_name()
    queue = make_rate_limiting_queue(name=name)
    for call, delay in calls:
        if call == "add_after":
            queue.add_after("a", delay)
        elif call == "add_rate_limited":
            queue.add_rate_limited("a")
        else:
            queue.add("a")
    assert sample("workqueue_retries_total", name) == retries


@pytest.mark.parametrize(
    ("calls", "retries"),
    [
        ([(0.0, False)], 0.0),  # controller-runtime counts only adds that are actually delayed
        ([(1.0, False), (2.0, False)], 2.0),
        ([(0.0, True)], 1.0),
    ],
)
def test_the_priority_queue_counts_a_retry_for_every_delayed_add(
    make_priority_queue: Callable[..., PriorityQueue[str]], calls: list[tuple[float, bool]], retries: float
) -> None:
    name = fresh_name()
    queue = make_priority_queue(name=name)
    for after, rate_limited in calls:
        queue.add("a", after=after, rate_limited=rate_limited)
    assert sample("workqueue_retries_total", name) == retries


def test_unfinished_work_and_longest_running_are_computed_when_scraped(
    make_queue: QueueFactory, clock: FakeClock
) -> None:
    name = fresh_name()
    queue = make_queue(name=name)
    queue.add("a")
    queue.add("b")
    queue.get(timeout=0)
    clock.advance(1.0)
    queue.get(timeout=0)
    clock.advance(2.0)
    assert sample("workqueue_unfinished_work_seconds", name) == 5.0  # a for 3 s, b for 2 s
    assert sample("workqueue_longest_running_processor_seconds", name) == 3.0
    queue.done("a")
    assert sample("workqueue_unfinished_work_seconds", name) == 2.0
    assert sample("workqueue_longest_running_processor_seconds", name) == 2.0
    queue.done("b")
    assert sample("workqueue_unfinished_work_seconds", name) == 0.0
    assert sample("workqueue_longest_running_processor_seconds", name) == 0.0


def test_a_delayed_item_counts_as_added_when_it_becomes_ready(make_queue: QueueFactory, clock: FakeClock) -> None:
    name = fresh_name()
    queue = make_queue(name=name)
    queue.add_after("a", 4.0)
    assert sample("workqueue_adds_total", name) == 0.0
    clock.advance(4.0)
    assert len(queue) == 1  # ready now (whether the waiting thread or this call moved it)
    clock.advance(1.0)
    assert drain(queue) == ["a"]
    assert sample("workqueue_adds_total", name) == 1.0
    assert sample("workqueue_queue_duration_seconds_sum", name) == 1.0  # time ready, not time waiting


def test_the_priority_queue_reports_depth_per_priority(
    make_priority_queue: Callable[..., PriorityQueue[str]], clock: FakeClock
) -> None:
    name = fresh_name()
    queue = make_priority_queue(name=name)
    queue.add("a")
    queue.add("b", priority=-100)
    queue.add("c", priority=-100)
    queue.add("d", priority=5, after=1.0)
    assert sample("workqueue_depth", name, priority="0") == 1.0
    assert sample("workqueue_depth", name, priority="-100") == 2.0
    assert sample("workqueue_depth", name, priority="5") is None  # waiting items are not in the depth
    assert sample("workqueue_depth", name, priority="") is None
    queue.add("b", priority=0)
    assert sample("workqueue_depth", name, priority="0") == 2.0
    assert sample("workqueue_depth", name, priority="-100") == 1.0
    clock.advance(1.0)
    assert queue.get_with_priority(timeout=0) == ("d", 5, False)
    assert sample("workqueue_depth", name, priority="5") == 0.0
    assert sample("workqueue_adds_total", name) == 4.0


def test_priorities_beyond_25_collapse_into_one_label(make_priority_queue: Callable[..., PriorityQueue[str]]) -> None:
    name = fresh_name()
    queue = make_priority_queue(name=name)
    for priority in range(30):
        queue.add(f"item-{priority}", priority=priority)
    labels = {
        s.labels["priority"]
        for family in REGISTRY.collect()
        for s in family.samples
        if s.name == "workqueue_depth" and s.labels["name"] == name
    }
    assert labels == {str(priority) for priority in range(25)} | {"exceeded_cardinality_limit"}
    assert sample("workqueue_depth", name, priority="exceeded_cardinality_limit") == 5.0
    assert sample("workqueue_depth", name, priority="24") == 1.0


def test_an_unnamed_queue_records_no_metrics(clock: FakeClock) -> None:
    before = series_names("workqueue_adds_total")
    for queue in (Queue[str](clock=clock), RateLimitingQueue[str](clock=clock), PriorityQueue[str](clock=clock)):
        queue.add("a")
        queue.get(timeout=0)
        queue.done("a")
        queue.shutdown()
    assert series_names("workqueue_adds_total") == before


def test_queues_sharing_a_name_add_up_and_counters_survive_a_collected_queue(clock: FakeClock) -> None:
    name = fresh_name()
    first: Queue[str] = Queue(name=name, clock=clock)
    second: Queue[str] = Queue(name=name, clock=clock)
    first.add("a")
    second.add("a")
    second.add("b")
    assert sample("workqueue_adds_total", name) == 3.0
    assert sample("workqueue_depth", name, priority="") == 3.0
    del second
    gc.collect()
    assert sample("workqueue_adds_total", name) == 3.0  # a counter never goes down
    assert sample("workqueue_depth", name, priority="") == 1.0  # a gauge reflects the queues that exist
    first.add("c")
    assert sample("workqueue_adds_total", name) == 4.0


def test_the_exposition_text_has_prometheus_names_and_labels(
    make_rate_limiting_queue: Callable[..., RateLimitingQueue[str]],
) -> None:
    name = fresh_name()
    queue = make_rate_limiting_queue(name=name)
    queue.add("a")
    queue.get(timeout=0)
    text = generate_latest(REGISTRY).decode()
    assert f'workqueue_adds_total{{controller="{name}",name="{name}"}} 1.0' in text
    assert f'workqueue_depth{{controller="{name}",name="{name}",priority=""}} 0.0' in text
    assert f'workqueue_queue_duration_seconds_bucket{{controller="{name}",le="1e-08",name="{name}"}} 1.0' in text
    assert f'workqueue_queue_duration_seconds_count{{controller="{name}",name="{name}"}} 1.0' in text
    assert f'workqueue_work_duration_seconds_count{{controller="{name}",name="{name}"}} 0.0' in text
    assert f'workqueue_unfinished_work_seconds{{controller="{name}",name="{name}"}} 0.0' in text


def test_scraping_while_workers_run_is_safe_and_ends_exact(make_queue: QueueFactory) -> None:
    name = fresh_name()
    queue = make_queue(name=name)
    stop = threading.Event()
    scrape_errors: list[BaseException] = []

    def scrape() -> None:
        while not stop.is_set():
            try:
                generate_latest(REGISTRY)
            except Exception as error:  # any failure is the finding
                scrape_errors.append(error)

    def work(offset: int) -> None:
        for index in range(1000):
            queue.add(f"{offset}-{index}")
            item, _ = queue.get()
            assert item is not None
            queue.done(item)

    scraper = threading.Thread(target=scrape)
    workers = [threading.Thread(target=work, args=(offset,)) for offset in range(2)]
    scraper.start()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    stop.set()
    scraper.join()
    assert scrape_errors == []
    assert sample("workqueue_adds_total", name) == 2000.0
    assert sample("workqueue_work_duration_seconds_count", name) == 2000.0
    assert sample("workqueue_unfinished_work_seconds", name) == 0.0
