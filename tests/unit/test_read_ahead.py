"""A whole stream is played in batches (``runtime.read_ahead_of``): the same records, in their order,
each batch observed before it plays, and the stream closed at the end or when the player stops."""

from __future__ import annotations

from collections.abc import Iterator

from jtop_roof.model.records import Event, Record, Sample
from jtop_roof.roofline.inference import BoardObserver
from jtop_roof.runtime import runtime
from jtop_roof.runtime.runtime import READ_AHEAD, read_ahead_of


class _Seen(BoardObserver):
    """Counts what it was shown."""

    def __init__(self) -> None:
        super().__init__()
        self.shown: list[Record] = []

    def add(self, record: Record) -> None:
        self.shown.append(record)
        super().add(record)


def _stream(count: int, closed: list[bool]) -> Iterator[Record]:
    try:
        for i in range(count):
            yield Sample(t_mono=float(i), t_wall=None) if i % 3 else Event("gap", "", None, float(i))
    finally:
        closed.append(True)


def test_every_record_comes_in_order_after_its_batch_was_observed():
    count = 2 * READ_AHEAD + 5
    closed: list[bool] = []
    observer = _Seen()
    given = []
    for i, record in enumerate(read_ahead_of(_stream(count, closed), observer)):
        # the whole batch holding it was shown first: as far as the batch's end, no further
        assert len(observer.shown) == min(count, (i // READ_AHEAD + 1) * READ_AHEAD)
        given.append(record)
    assert [record.t_mono for record in given] == [float(i) for i in range(count)]
    assert observer.shown == given and closed == [True]
    assert observer.observation().samples == sum(1 for r in given if isinstance(r, Sample))


def test_the_stream_is_closed_when_the_player_stops_early():
    closed: list[bool] = []
    ahead = read_ahead_of(_stream(10 * READ_AHEAD, closed))
    assert next(ahead).t_mono == 0.0
    ahead.close()  # ``pump`` closes what it plays on the way out
    assert closed == [True]


def test_a_plain_log_is_played_in_batches_of_read_ahead(monkeypatch):
    """``play_whole`` reads through ``read_ahead_of``: the stream is pulled a batch ahead of the
    pipeline (the long way, a record at a time, is ``READ_AHEAD = 1``)."""
    from jtop_roof.model.info import SourceInfo
    from jtop_roof.runtime.config import Config

    pulled: list[int] = []
    ingested: list[int] = []

    def records() -> Iterator[Record]:
        for i in range(3 * READ_AHEAD):
            pulled.append(i)
            yield Sample(t_mono=float(i), t_wall=None)

    def make() -> runtime.Pipeline:
        pipeline = runtime.build_pipeline(Config(), SourceInfo("replay"), interval_s=1.0)
        ingest = pipeline.ingest

        def counted(record: Record) -> list[Event]:
            ingested.append(len(pulled))
            return ingest(record)

        monkeypatch.setattr(pipeline, "ingest", counted)
        return pipeline

    monkeypatch.setattr(runtime, "FIRST_LOOK", 1)
    runtime.play_whole(make, records)
    # the first look's sample, then each record of a batch played once the whole batch was read
    assert ingested[1:READ_AHEAD + 1] == [1 + READ_AHEAD] * READ_AHEAD


def test_a_whole_play_raises_the_collectors_threshold_and_gives_it_back():
    """A batch's records would set off a collection each (``PLAY_GC_THRESHOLD``): while a whole
    stream plays the first threshold is raised, and afterwards it is what it was."""
    import gc

    from jtop_roof.model.info import SourceInfo
    from jtop_roof.runtime.config import Config

    seen: list[int] = []

    def records() -> Iterator[Record]:
        seen.append(gc.get_threshold()[0])
        yield Sample(t_mono=0.0, t_wall=None)

    before = gc.get_threshold()
    runtime.play_whole(lambda: runtime.build_pipeline(Config(), SourceInfo("replay"), interval_s=1.0),
                       records)
    assert seen == [max(before[0], runtime.PLAY_GC_THRESHOLD)]
    assert gc.get_threshold() == before


def test_plays_that_overlap_give_back_the_threshold_of_before_the_first():
    import gc

    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        first, second = runtime.few_collections(), runtime.few_collections()
        first.__enter__()
        second.__enter__()
        assert gc.get_threshold() == (runtime.PLAY_GC_THRESHOLD, 10, 10)
        first.__exit__(None, None, None)  # the first ends before the second
        assert gc.get_threshold() == (runtime.PLAY_GC_THRESHOLD, 10, 10)
        second.__exit__(None, None, None)
        assert gc.get_threshold() == (700, 10, 10)
        gc.set_threshold(0)  # automatic collection off: left off
        with runtime.few_collections():
            assert gc.get_threshold()[0] == 0
    finally:
        gc.set_threshold(*before)
