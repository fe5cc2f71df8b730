"""The world a day's processes act in: its random streams, the knowledge base it starts
from, the store that holds it, and the :class:`Day` that carries them to every actor.

Nothing here runs: :mod:`kbsim.sim.day` opens a :class:`Day` over a store and runs its
actors (:mod:`kbsim.sim.processes`); :mod:`kbsim.sim.replay` indexes the starting
articles for traces to name them. Both read the world from here, and neither is
imported by it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import simpy

from kbsim.inputs import LoadedCorpus, load_corpus
from kbsim.inputs.resolve import corpus_analyzer, corpus_edits
from kbsim.params import DEFAULT_STORE_BACKEND, SERVER_STORE_BACKEND, CorpusParams, DayParams
from kbsim.sim.corpus import Corpus, RevisingCorpus, TextCorpus
from kbsim.sim.popularity import Popularity
from kbsim.sim.records import DayLog
from kbsim.sim.transport import LossyClient, ToolClient, TransportRecord
from kbsim.store import MemoryStore, Store, StoreFactory, store_backend
from kbsim.store.analyzer import ASCII, Analyzer
from kbsim.store.timefmt import written_version_us
from kbsim.store.written import WrittenArticles

__all__ = [
    "KB_ID",
    "STREAMS",
    "Agents",
    "Day",
    "agent_of",
    "StartingKnowledgeBase",
    "day_store",
    "starting_knowledge_base",
    "streams",
]

KB_ID = "kb-1"
#: Named random streams, spawned in this order (a new stream goes last, so the others keep
#: their numbers). ``save_targets`` and ``question_draws`` hand each save and question its
#: own block of uniforms (see :meth:`Popularity.draw`); ``save_ranking`` is the noise of a
#: save ranking correlated with the question ranking (``saves.rank_correlation``);
#: ``transport`` the lossy wire's losses (drawn only when ``transport.loss_rate`` > 0);
#: ``drafts`` which of people's saves are drafted first (only when ``drafts.share`` > 0);
#: ``review`` which agent edits are wrong and caught (only when ``review.wrong_share`` > 0).
STREAMS = ("corpus", "editors", "askers", "agent", "tail", "save_targets", "question_draws", "save_ranking",
           "transport", "drafts", "review")


def streams(seed: int) -> dict[str, np.random.Generator]:
    """One independent generator per named stream, all from ``SeedSequence(seed)``."""
    children = np.random.SeedSequence(seed).spawn(len(STREAMS))
    return {name: np.random.default_rng(child) for name, child in zip(STREAMS, children, strict=True)}


# -- the knowledge base a day starts from -------------------------------------------------


@dataclass(frozen=True, eq=False)
class StartingKnowledgeBase:
    """A seed's knowledge base at time 0: the corpus that writes people's text, the
    articles in publication order, and their popularity ranking.

    ``ranking[r]`` is the index into ``article_ids`` of the article at popularity
    rank ``r`` (0 = most popular): a seeded shuffle, or the order of ``weights`` (a
    corpus from files with a popularity column). ``template`` holds every article
    published at 0; it is copied for each day, never changed.
    """

    corpus: Corpus | TextCorpus | RevisingCorpus
    article_ids: tuple[str, ...]
    ranking: np.ndarray
    template: MemoryStore
    weights: np.ndarray | None = None
    #: the corpus's own ids of the articles (a corpus from files that has them), or None
    source_ids: tuple[str, ...] | None = None
    #: how the knowledge base's text becomes search terms
    analyzer: Analyzer = ASCII
    #: the corpus from files it was published from, or None (a synthetic corpus)
    loaded: LoadedCorpus | None = None

    def articles(self) -> Iterator[tuple[str, str]]:
        """``(title, content)`` of every article, in publication order."""
        for article_id in self.article_ids:
            article = self.template.article_state(KB_ID, article_id)
            yield article.title, article.content

    def popularity(self, s: float) -> Popularity:
        """Zipf popularity with exponent ``s`` over the ranking (``s = 0``: uniform)."""
        return Popularity(list(self.article_ids), self.ranking, s)


def starting_knowledge_base(corpus_params: CorpusParams, seed: int) -> StartingKnowledgeBase:
    """The corpus, the published knowledge base and the popularity ranking of a seed.

    Built once per ``(corpus params, seed)`` in a process and copied for each
    day (the days of a sweep share their seed's corpus); never mutated. A corpus
    from files is read once per version of the files (:func:`kbsim.inputs.load_corpus`)
    and published once, whatever the seed; only its ranking is the seed's.
    """
    if corpus_params.source is None:
        return _synthetic_knowledge_base(corpus_params, seed)
    loaded = load_corpus(corpus_params.source)
    analyzer, edits = corpus_analyzer(corpus_params, loaded), corpus_edits(corpus_params, loaded)
    return _knowledge_base_from(loaded, seed, analyzer, edits)


@lru_cache(maxsize=8)
def _synthetic_knowledge_base(corpus_params: CorpusParams, seed: int) -> StartingKnowledgeBase:
    rng = streams(seed)["corpus"]
    corpus = Corpus.build(corpus_params)
    template = MemoryStore()
    title_words, body_words = corpus.article_words(rng)  # indexed from the words, written when read
    article_ids = template.create_knowledge_base_written(
        KB_ID, WrittenArticles(corpus.vocabulary, title_words, body_words), at=0.0
    )
    ranking = rng.permutation(len(article_ids))
    # the template lives as long as its seed's days: the collector need not walk it again
    gc.freeze()
    return StartingKnowledgeBase(corpus, tuple(article_ids), ranking, template)


@lru_cache(maxsize=8)
def _knowledge_base_from(loaded: LoadedCorpus, seed: int, analyzer: Analyzer = ASCII,
                         edits: str = "swap_lines") -> StartingKnowledgeBase:
    """A corpus from files: its articles in file order, by their own ids (else art-NNNNNN);
    ranked by its popularity weights (ties in file order), or, without them, by the seed's
    shuffle as the synthetic corpus is."""
    template, text = _published(loaded, analyzer, edits)
    article_ids = tuple(template.published_article_ids(KB_ID))
    if loaded.weights is not None:
        ranking = np.argsort(-loaded.weights, kind="stable")
    else:
        ranking = streams(seed)["corpus"].permutation(len(article_ids))
    return StartingKnowledgeBase(text, article_ids, ranking, template, loaded.weights, loaded.ids, analyzer, loaded)


@lru_cache(maxsize=2)
def _published(loaded: LoadedCorpus, analyzer: Analyzer, edits: str) -> tuple[MemoryStore, TextCorpus | RevisingCorpus]:
    template = MemoryStore()
    ids = template.create_knowledge_base(KB_ID, loaded.articles(), at=0.0, article_ids=loaded.ids, analyzer=analyzer)
    if edits == "revise":
        return template, RevisingCorpus.from_articles(loaded.titles, loaded.contents, ids)
    return template, TextCorpus.from_articles(loaded.titles, loaded.contents)


def day_store(starting: StartingKnowledgeBase, params: DayParams, store: StoreFactory | None = None) -> Store:
    """A store holding the starting knowledge base as ``KB_ID``, with the day's retention.

    ``store`` builds an empty backend from the retention window, which is then
    filled with every article at time 0 (one transaction); without it, the backend
    ``params.store.backend`` names is (for the default, ``memory``, the in-memory
    template is copied, which gives the same state faster).
    """
    if store is None and params.store.backend == SERVER_STORE_BACKEND:
        raise ValueError("store.backend 'server' is a live server: hand the day its store, as the runner does "
                         "(kbsim.drive.server_day_store), run_day(params, seed, store=..., env=...)")
    if store is None and params.store.backend != DEFAULT_STORE_BACKEND:
        store = store_backend(params.store.backend)
    if store is None:
        return starting.template.copy(event_retention_s=params.event_retention_s)
    backend = store(params.event_retention_s)
    own: dict[str, Any] = {} if starting.source_ids is None else {"article_ids": starting.source_ids}
    if not starting.analyzer.is_default:  # a backend without these keywords still runs the study
        own["analyzer"] = starting.analyzer
    ids = backend.create_knowledge_base(KB_ID, starting.articles(), at=0.0, **own)
    if tuple(ids) != starting.article_ids:
        raise RuntimeError(
            f"{backend!r} numbered the starting articles {ids[:3]}..., not "
            f"{list(starting.article_ids[:3])}...: a backend must number articles in publication order"
        )
    return backend


# -- the day --------------------------------------------------------------------------------


@dataclass(eq=False)
class Day:
    """The world a day's actors share: ``editor(day, arrivals)``, ``asker(day, ...)``,
    ``checker(day)``, ``agent_edit(day, ...)`` read everything from it.

    ``questions_by`` and ``saves_by`` are the popularity people draw the article of a
    question and of a save by (when their arrival does not name it); ``corpus`` writes
    the text of people's saves. :func:`kbsim.sim.day.open_day` builds one.
    """

    env: simpy.Environment
    store: Store
    client: ToolClient
    kb_id: str
    params: DayParams
    streams: dict[str, np.random.Generator]
    log: DayLog
    corpus: Corpus | TextCorpus | RevisingCorpus
    questions_by: Popularity
    saves_by: Popularity
    #: agent edit processes started so far (the day runs until they are done)
    edits: list = field(default_factory=list)
    #: article id -> (title or None, content, drafted_s) of a person's pending draft
    #: (``drafts.share`` > 0; issue 37)
    drafts: dict[str, tuple[str | None, str, float]] = field(default_factory=dict)
    #: the agents and their wires on a day with the design switches
    #: (:attr:`~kbsim.params.DayParams.uses_design_switches`); None: the one agent, on ``client``
    agents: Agents | None = None

    @property
    def check_client(self) -> ToolClient:
        """The client the day's checks go through: the agent's, or one consumer shared by
        several agents (its own wire)."""
        return self.client if self.agents is None else self.agents.shared

    @property
    def cited_text(self) -> dict[int, tuple[str, str]] | None:
        """The text of every citation as cited when citations carry no version (the checks
        compare it); None when they do."""
        if self.agents is None or self.params.citation.carries_version:
            return None
        return self.agents.cited_text

    def agent_client(self, answer_id: int) -> ToolClient:
        """The client of the agent that gave answer ``answer_id``."""
        if self.agents is None:
            return self.client
        return self.agents.clients[agent_of(answer_id, self.params.agents.count)]

    def is_published(self, article_id: str) -> bool:
        """Whether the article is published now (people draw only published articles)."""
        return self.store.current_version(self.kb_id, article_id) is not None

    def unpublished_ids(self) -> list[str]:
        """Every unpublished article's id: of the articles the day ranks (each one in its
        store), exactly those :meth:`is_published` refuses."""
        return self.store.unpublished_article_ids(self.kb_id)


def agent_of(answer_id: int, count: int) -> int:
    """The agent an answer is dealt to (answer ``i`` to agent ``i mod count``)."""
    return answer_id % count


@dataclass(eq=False)
class Agents:
    """The agents of a day with the design switches, their wires, and what the switches need
    remembered while it runs (issue 27).

    ``agents.count`` agents: the day's questions are dealt to them in turn, so every N
    answers the same questions as the one agent does, and the ``agent`` stream chooses the
    same answers to edit. Each agent has its own client behind its own lossy wire
    (:class:`~kbsim.sim.transport.LossyClient`), its own citations, checks and edits; the
    questions' searches and reads go through one more wire, the desk's, and the day's checks
    through a shared consumer's (agent 0's own when there is one agent).
    """

    clients: list[LossyClient]
    desk: LossyClient
    shared: LossyClient
    #: each agent write's version -> (agent, answer) that wrote it
    writer: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: indices into the log's saves of people's saves already lost
    lost_saves: set[int] = field(default_factory=set)
    #: citation index -> (title, content) as cited (kept only without versions)
    cited_text: dict[int, tuple[str, str]] = field(default_factory=dict)
    fresh_keys: int = 0

    @classmethod
    def open(cls, day: Day) -> Agents:
        """One lossy client per agent and one for the desk, each with its own child of the
        ``transport`` stream (never drawn from while ``loss_rate`` is 0), over ``day.client``."""
        count, transport = day.params.agents.count, day.params.transport
        children = day.streams["transport"].spawn(count + 2)

        def wire(rng: np.random.Generator, name: str) -> LossyClient:
            return LossyClient(day.store.client(grants={day.kb_id}, clock=lambda: day.env.now), rng, transport, name)

        clients = [wire(rng, str(k)) for k, rng in enumerate(children[:count])]
        shared = clients[0] if count == 1 else wire(children[count + 1], "shared")
        return cls(clients, LossyClient(day.client, children[count], transport, "desk"), shared)

    def transport_records(self) -> list[TransportRecord]:
        """Every wire's rows: each agent's, the desk's, and the shared consumer's when it is
        a wire of its own."""
        wires = [*self.clients, self.desk] + ([self.shared] if self.shared not in self.clients else [])
        return [record for client in wires for record in client.ledger.records()]

    def saves_after(self, log: DayLog, article_id: str, after: str, until: str) -> list[int]:
        """Indices of the saves of ``article_id`` with a version in ``(after, until]``."""
        low, high = written_version_us(after), written_version_us(until)
        return [
            i for i, save in enumerate(log.saves)
            if save.article_id == article_id and low < written_version_us(save.version) <= high
        ]
