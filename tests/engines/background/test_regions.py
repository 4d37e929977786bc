"""``regions.segmentations`` gives scikit-image's ``felzenszwalb`` label for label (the parts
step's votes were tuned on it), for every setting the parts step uses and on edge cases: flat
images (every weight ties), noise, thin strips, an image smaller than ``min_size``. The
per-region sums and contacts the parts step reads from them are NumPy's to the bit."""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
import pytest
from skimage import data
from skimage.segmentation import felzenszwalb

from pixelmill.engines.background import regions
from pixelmill.engines.background.parts import MIN_REGION, SEGMENTATIONS
from pixelmill.engines.background.regions import contacts, region_sums, segmentations


def _small(image: npt.NDArray[np.uint8], side: int = 128) -> npt.NDArray[np.uint8]:
    h, w = image.shape[:2]
    f = side / max(h, w)
    size = (max(1, round(w * f)), max(1, round(h * f)))
    return np.asarray(cv2.resize(image, size, interpolation=cv2.INTER_AREA), np.uint8)


def _photos() -> dict[str, npt.NDArray[np.uint8]]:
    names = ("coffee", "astronaut", "chelsea", "rocket", "immunohistochemistry")
    photos = {n: _small(np.asarray(getattr(data, n)())[..., :3]) for n in names}
    rng = np.random.default_rng(7)
    photos["noise"] = rng.integers(0, 256, (40, 61, 3), dtype=np.uint8)
    photos["flat"] = np.full((30, 45, 3), 128, np.uint8)
    steps = np.zeros((32, 48, 3), np.uint8)
    steps[:, 16:] = 90
    steps[:, 32:] = (200, 10, 60)
    photos["steps"] = steps
    photos["row"] = rng.integers(0, 256, (1, 50, 3), dtype=np.uint8)
    photos["column"] = rng.integers(0, 256, (37, 1, 3), dtype=np.uint8)
    photos["tiny"] = rng.integers(0, 256, (3, 4, 3), dtype=np.uint8)
    return photos


PHOTOS = _photos()


@pytest.mark.parametrize("name", sorted(PHOTOS))
def test_the_regions_are_scikit_images(name: str) -> None:
    image = PHOTOS[name]
    settings = (*SEGMENTATIONS, (0.8, 1.0), (0.0, 500.0))
    for min_size in (MIN_REGION, 1, 5):
        ours = list(segmentations(image, settings, min_size))
        assert len(ours) == len(settings)
        for (sigma, scale), labels in zip(settings, ours, strict=True):
            theirs = felzenszwalb(image, scale=scale, sigma=sigma, min_size=min_size)
            assert labels.dtype == np.int32 and labels.shape == image.shape[:2]
            np.testing.assert_array_equal(labels, theirs, err_msg=f"{sigma}, {scale}, {min_size}")


def test_a_caller_that_stops_early_gets_the_first_settings_only() -> None:
    image = PHOTOS["coffee"]
    first = next(iter(segmentations(image, SEGMENTATIONS, MIN_REGION)))
    sigma, scale = SEGMENTATIONS[0]
    np.testing.assert_array_equal(
        first, felzenszwalb(image, scale=scale, sigma=sigma, min_size=MIN_REGION)
    )
    # The regions are not all one: a real segmentation of a photo.
    assert 10 < int(first.max()) < first.size // MIN_REGION


class _CountedMerges:
    """The compiled loops with ``merge`` counted; on a thread other than the test's, the second
    merge waits (once begun) until ``release`` is set."""

    def __init__(self, compiled: Any) -> None:
        self._compiled = compiled
        self.calls = 0
        self.worker_calls = 0
        self.release = threading.Event()

    def merge(self, *args: Any) -> Any:
        self.calls += 1
        if threading.current_thread() is not threading.main_thread():
            self.worker_calls += 1
            if self.worker_calls == 2:
                assert self.release.wait(30)
        return self._compiled.merge(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._compiled, name)


@pytest.fixture
def one_worker(monkeypatch: pytest.MonkeyPatch) -> Iterator[ThreadPoolExecutor]:
    """The later sigmas' worker as a pool of one thread: a task submitted after it runs after it."""
    pool = ThreadPoolExecutor(max_workers=1)
    monkeypatch.setattr(regions, "_worker", lambda: pool)
    yield pool
    pool.shutdown(wait=True)


def test_a_caller_that_stops_early_stops_the_later_sigmas_worker(
    monkeypatch: pytest.MonkeyPatch, one_worker: ThreadPoolExecutor
) -> None:
    counted = _CountedMerges(regions.COMPILED.get())
    monkeypatch.setattr(regions.COMPILED, "get", lambda: counted)
    image = PHOTOS["coffee"]
    run = segmentations(image, SEGMENTATIONS, MIN_REGION)
    got = [next(run) for _ in range(4)]  # the first sigma's three, the second's first
    run.close()  # type: ignore[attr-defined]  # a generator
    counted.release.set()  # the worker's second merge, begun before it was told, goes on
    one_worker.submit(lambda: None).result(timeout=30)  # the worker has returned
    # The worker stops before its next merge (it may have begun the one after the caller's
    # last, which it was let start when that was taken): the second sigma's third is never made.
    assert counted.worker_calls in (1, 2)
    assert counted.calls == 3 + counted.worker_calls
    sigma, scale = SEGMENTATIONS[3]
    np.testing.assert_array_equal(
        got[3], felzenszwalb(image, scale=scale, sigma=sigma, min_size=MIN_REGION)
    )


def test_an_error_on_the_later_sigmas_worker_reaches_the_caller(
    monkeypatch: pytest.MonkeyPatch, one_worker: ThreadPoolExecutor
) -> None:
    sorted_edges = regions._sorted_edges
    second = SEGMENTATIONS[3][0]

    def failing(image: Any, sigma: float) -> Any:
        if sigma == second:
            raise MemoryError("edges failed")
        return sorted_edges(image, sigma)

    monkeypatch.setattr(regions, "_sorted_edges", failing)
    run = segmentations(PHOTOS["coffee"], SEGMENTATIONS, MIN_REGION)
    first = [next(run) for _ in range(3)]
    assert all(int(labels.max()) > 10 for labels in first)
    with pytest.raises(MemoryError, match="edges failed"):
        next(run)


def test_a_worker_left_waiting_gives_up_and_tells_the_caller(
    monkeypatch: pytest.MonkeyPatch, one_worker: ThreadPoolExecutor
) -> None:
    # A caller that neither takes the next segmentation nor closes the generator (an abandoned
    # one, kept alive): the worker stops waiting after _WAIT and the thread is free again.
    monkeypatch.setattr(regions, "_WAIT", 0.2)
    run = segmentations(PHOTOS["coffee"], SEGMENTATIONS, MIN_REGION)
    got = [next(run) for _ in range(4)]  # taking the fourth lets the worker make the fifth
    one_worker.submit(lambda: None).result(timeout=30)  # it has given up on the sixth, returned
    got.append(next(run))
    assert all(int(labels.max()) > 10 for labels in got)
    with pytest.raises(TimeoutError, match="none was taken"):
        next(run)


def _segment_in_child(conn: Any) -> None:
    image = PHOTOS["coffee"]
    conn.send([labels.max() for labels in segmentations(image, SEGMENTATIONS, MIN_REGION)])


def test_a_forked_process_segments_with_threads_of_its_own() -> None:
    # The parent has used its worker threads (a server that warmed up before forking workers).
    image = PHOTOS["coffee"]
    ours = [int(labels.max()) for labels in segmentations(image, SEGMENTATIONS, MIN_REGION)]
    context = multiprocessing.get_context("fork")
    parent, child = context.Pipe()
    process = context.Process(target=_segment_in_child, args=(child,))
    process.start()
    try:
        assert parent.poll(60), "the forked process never finished its segmentations"
        assert [int(n) for n in parent.recv()] == ours
    finally:
        process.join(10)
        if process.is_alive():
            process.kill()
    assert process.exitcode == 0


@pytest.mark.parametrize("name", ["coffee", "noise", "steps", "row", "column", "tiny"])
def test_region_sums_and_contacts_are_numpys(name: str) -> None:
    image = _photos()[name]
    labels = next(segmentations(image, SEGMENTATIONS[:1], MIN_REGION))
    n = int(labels.max()) + 1
    rng = np.random.default_rng(3)
    rows = np.stack(
        [
            np.ones(labels.size),
            rng.random(labels.size),
            (rng.random(labels.size) > 0.5).astype(np.float64),
            cv2.cvtColor(image, cv2.COLOR_RGB2LAB)[..., 1].ravel().astype(np.float64),
        ]
    )
    sums = region_sums(labels, n, rows)
    flat = labels.ravel()
    for k, row in enumerate(rows):
        # The same order of summation: equal to the bit, not merely close.
        assert np.array_equal(sums[:, k], np.bincount(flat, weights=row, minlength=n))
    # Each 4-neighbour pair of pixels in different regions, counted both ways.
    a = np.concatenate([labels[:, :-1].ravel(), labels[:-1, :].ravel()])
    b = np.concatenate([labels[:, 1:].ravel(), labels[1:, :].ravel()])
    expected = np.zeros((n, n), np.int64)
    np.add.at(expected, (a[a != b], b[a != b]), 1)
    counted = contacts(labels, n)
    assert np.array_equal(counted, expected + expected.T)
    assert counted.sum() == 2 * int((a != b).sum())


def test_the_edge_sort_is_numpys_stable_argsort() -> None:
    from pixelmill.engines.background.regions import COMPILED

    rng = np.random.default_rng(5)
    # Many ties (quantised weights, zeros) and weights spread over several exponents.
    for weights in (
        np.round(rng.random(5000) * 40) / 40,
        rng.random(3000) ** 8,
        np.zeros(100),
        np.array([0.5]),
        np.sqrt(rng.integers(0, 3, 4000) / 3.0),
    ):
        order = COMPILED.get().argsort(np.ascontiguousarray(weights, np.float64))
        assert np.array_equal(order, np.argsort(weights, kind="stable"))
