"""People's synthetic bodies drawn many at a time (:class:`kbsim.sim.corpus.BodiesAhead`).

The editor's stream draws the uniforms of a run of bodies at once; every body, and every
other draw from the stream between them (a retitle's integers, the arrivals' uniforms),
must be the number the plain stream gives when each body is drawn at its save.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from kbsim.params import DayParams
from kbsim.sim.corpus import BodiesAhead, Corpus, TextCorpus
from kbsim.sim.day import run_day


def small_corpus(body_words: int = 7) -> Corpus:
    return Corpus.build(DayParams(corpus={"articles": 60, "body_words": body_words}).corpus)


def other_draw(rng, kind: int):
    """One draw of a kind the editor's stream also makes, besides bodies."""
    if kind == 0:
        return rng.integers(17)  # below 2**32: takes a half of a 64-bit draw (buffered)
    if kind == 1:
        return rng.integers(3, size=2).tolist()
    if kind == 2:
        return rng.random()
    if kind == 3:
        return rng.choice(5, size=3, p=[0.1, 0.2, 0.3, 0.2, 0.2]).tolist()
    return rng.uniform(0.0, 10.0, size=2).tolist()


@pytest.mark.parametrize("seed", range(6))
def test_bodies_and_other_draws_are_the_plain_streams(seed):
    corpus = small_corpus()
    script = np.random.default_rng(100 + seed)
    plain = np.random.default_rng(seed)
    ahead = BodiesAhead.wrap(np.random.default_rng(seed), corpus)
    assert ahead is not None
    for _ in range(600):
        if script.random() < 0.8:  # runs of bodies, long and short, between other draws
            assert np.array_equal(ahead.next_body(), corpus.body_words(plain))
        else:
            kind = int(script.integers(5))
            assert other_draw(ahead, kind) == other_draw(plain, kind)
    assert ahead.random() == plain.random()


def test_a_run_longer_than_the_largest_block():
    corpus = small_corpus(body_words=5)
    plain, ahead = np.random.default_rng(4), BodiesAhead.wrap(np.random.default_rng(4), corpus)
    for _ in range(2 * BodiesAhead.MOST + 3):
        assert np.array_equal(ahead.next_body(), corpus.body_words(plain))
    assert ahead.integers(10**6) == plain.integers(10**6)


def test_the_buffered_half_draw_survives_a_catch_up():
    # an odd number of 32-bit draws leaves half of a 64-bit draw buffered; bodies taken
    # from a block drawn ahead, then a catch-up, must leave it for the next small integer
    corpus = small_corpus()
    plain, ahead = np.random.default_rng(9), BodiesAhead.wrap(np.random.default_rng(9), corpus)
    assert ahead.integers(1000) == plain.integers(1000)
    for _ in range(3):
        assert np.array_equal(ahead.next_body(), corpus.body_words(plain))
    assert [ahead.integers(1000) for _ in range(3)] == [plain.integers(1000) for _ in range(3)]


def test_words_of_is_body_words_row_by_row():
    corpus = small_corpus(body_words=11)
    uniforms = np.random.default_rng(2).random((40, 11))
    uniforms[0, :3] = [0.0, 1.0 - 2**-53, corpus.body_weights[5]]  # the ends, and a weight itself
    rows = corpus.words_of(uniforms)

    class Fixed:
        """A stream that draws the given uniforms."""

        def __init__(self, drawn):
            self.drawn = drawn

        def random(self, n):
            assert n == self.drawn.size
            return self.drawn

    for row, drawn in zip(rows, uniforms, strict=True):
        assert np.array_equal(row, corpus.body_words(Fixed(drawn)))


def test_wrap_only_a_pcg64_stream_of_the_synthetic_corpus():
    corpus = small_corpus()
    assert BodiesAhead.wrap(np.random.Generator(np.random.MT19937(1)), corpus) is None
    assert BodiesAhead.wrap(np.random.default_rng(1), TextCorpus(["a line"], ["Word"], ["A title"])) is None
    assert BodiesAhead.wrap(BodiesAhead.wrap(np.random.default_rng(1), corpus), corpus) is None


def test_private_names_are_not_the_streams():
    ahead = BodiesAhead.wrap(np.random.default_rng(1), small_corpus())
    with pytest.raises(AttributeError):
        ahead._missing  # noqa: B018
    assert copy.copy(ahead) is not ahead  # copying looks up names the object does not have


@pytest.mark.parametrize("seed", [1, 2])
def test_a_day_with_retitles_and_replacements_keeps_its_draws(seed, monkeypatch):
    # every body through the plain stream (BodiesAhead refused) against the day as it runs
    params = DayParams(
        corpus={"articles": 80},
        questions={"count": 30},
        saves={"count": 200, "replace_unpublished": True, "mix": {"content": 0.6, "content_and_title": 0.3,
                                                                   "unpublish": 0.1}},
    )
    fast = run_day(params, seed)
    monkeypatch.setattr(BodiesAhead, "wrap", classmethod(lambda cls, rng, corpus: None))
    plain = run_day(params, seed)
    for name, table in plain.items():
        assert fast[name].equals(table), name
