"""The parameters of one simulated day, validated and frozen.

Every field has the reference study's default (docs/model.md, "The simulated day"), so
``DayParams()`` is the reference Zipf day without edits. Nested groups are
their own models so that sweeps can address them by dotted name
(``saves.zipf_s``, ``edit.delay_s``). Unknown keys are rejected.
"""

from __future__ import annotations

import math
import typing
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_validator,
    model_serializer,
    model_validator,
)

from kbsim.units import parse_duration

#: Parameters that name input files (relative paths are relative to the config file that
#: sets them; kbsim.runner.load resolves them when it reads the file).
INPUT_PATHS = ("corpus.source", "saves.trace", "questions.trace")
#: The store backend a day runs on unless its parameters name another (``store.backend``).
DEFAULT_STORE_BACKEND = "memory"
#: The languages ``corpus.language`` names (ISO 639-1 codes; ``und``: no language in
#: particular): each turns on the Unicode analyzer, with that language's stop words and
#: Snowball stemmer where kbsim has them (kbsim.store.analyzer; docs/model.md).
CORPUS_LANGUAGES = (
    "ar", "az", "ca", "cs", "da", "de", "el", "en", "eo", "es", "et", "eu", "fa", "fi", "fr", "ga", "he", "hi",
    "hu", "hy", "id", "it", "ja", "km", "ko", "lo", "lt", "my", "ne", "nl", "no", "pl", "pt", "ro", "ru",
    "sr", "st", "sv", "ta", "th", "tr", "uk", "und", "vi", "yi", "zh",
)
#: ``corpus.language`` for a corpus whose articles' languages its text tells
#: (kbsim.store.analyzer.auto_analyzer): each script's language, Latin by its stop words.
AUTO_LANGUAGE = "auto"
#: The reference day's saves and questions per article (300 and 120 for 400 articles): a day
#: on a corpus from files has these per article unless its counts are given.
SAVES_PER_ARTICLE = 0.75
#: The highest ``transport.loss_rate``: each send's reply then arrives 2 times in 100 (at
#: 0.5 it never does, and the day cannot finish).
MAX_LOSS_RATE = 0.49
QUESTIONS_PER_ARTICLE = 0.3


def _seconds(value: Any) -> Any:
    """A duration written with its unit (``10min``, ``1.5h``, ``90s``) as its number of seconds;
    a number (or anything else) as it is, for the field's own check. A key ending in ``_s``
    says its unit, so a bare number there is seconds, and text without a unit too (``"600"``)."""
    if isinstance(value, str):
        seconds = parse_duration(value, allow_zero=True)
        return int(seconds) if seconds.is_integer() else seconds  # "10min" reads as the 600 a config writes
    return value


#: A duration in seconds that a config may also write with a unit (``edit.delay_s: 10min``):
#: the model, and so every dump, run id and table, holds the number of seconds.
Seconds = Annotated[float, BeforeValidator(_seconds)]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    #: Fields left out of a dump while None: added after results were first written, so
    #: that days which do not use them keep their dumps, and so their run ids.
    _OMITTED_WHEN_NONE: tuple[str, ...] = ()
    #: Groups left out of a dump while at their defaults, for the same reason.
    _OMITTED_WHEN_DEFAULT: tuple[str, ...] = ()

    @model_serializer(mode="wrap")
    def _dump(self, handler) -> dict[str, Any]:
        data = handler(self)
        for name in self._OMITTED_WHEN_NONE:
            if data.get(name, 0) is None:
                del data[name]
        for name in self._OMITTED_WHEN_DEFAULT:
            if getattr(self, name) == type(self).model_fields[name].default:
                data.pop(name, None)
        return data


class CorpusParams(_Frozen):
    """The corpus: synthetic (titles and bodies drawn from a seeded vocabulary), or read
    from ``source`` (then the synthetic parameters do not apply)."""

    _OMITTED_WHEN_NONE = ("source", "language", "analyzer", "edits")

    source: str | None = Field(
        None,
        description="articles from files: a folder of .md/.txt files, a .jsonl or a .csv file, or "
        "'kbsim:sample', 'kbsim:sample-de', 'kbsim:sample-hi' (the shipped sample help desks); None: "
        "the synthetic corpus",
    )
    language: str | None = Field(
        None,
        description="a corpus from files: its language (en, de, hi, fr, es, ja, zh, ...; 'und' for none in "
        "particular), which turns on the Unicode analyzer with that language's stop words and stemmer; "
        "'auto': each article's language from its script and stop words (one language's analyzer, or one "
        "per script and language for a mixed corpus; English unstemmed, as the default); "
        "None: the corpus's own (the German and Hindi samples declare theirs), else none",
    )
    analyzer: Literal["ascii", "unicode"] | None = Field(
        None,
        description="how text becomes search terms: 'ascii' (lower-cased runs of ASCII letters and digits, "
        "as the study), 'unicode' (any script: NFKC, case folding, words with their combining marks, "
        "bigrams of Chinese, Japanese and Thai); None: 'unicode' with a language, else 'ascii'",
    )
    edits: Literal["revise", "swap_lines"] | None = Field(
        None,
        description="a corpus from files: how people's saves write text. 'revise': rewrite, insert or delete "
        "a sentence or a step of the article's own text, and retitle it recognisably; 'swap_lines': put a "
        "line of another article in place of one of its lines, and a word of another title in its title. "
        "None: 'swap_lines' on 'kbsim:sample' (the edits its published study ran with), else 'revise'",
    )
    articles: int = Field(400, ge=3, description="articles published at the start of the day")
    vocabulary_per_article: float = Field(
        4.0, gt=0, description="distinct vocabulary words per article (Heaps-style growth)"
    )
    min_vocabulary: int = Field(600, ge=50, description="vocabulary floor for small corpora")
    title_words: int = Field(4, ge=2, le=12)
    body_words: int = Field(60, ge=5, le=2000)

    #: what applies to a corpus from files only
    _FILE_ONLY = ("language", "analyzer", "edits")

    @model_validator(mode="after")
    def _synthetic_or_files(self) -> CorpusParams:
        synthetic = sorted(
            name for name in self.model_fields_set - {"source", *self._FILE_ONLY}
            if getattr(self, name) != type(self).model_fields[name].default
        )
        given = [name for name in self._FILE_ONLY if getattr(self, name) is not None]
        if self.source is None and given:
            raise ValueError(
                f"{', '.join(given)} {'applies' if len(given) == 1 else 'apply'} to a corpus from files "
                "(source), not to the synthetic corpus; "
                "remove them"
            )
        if self.language is not None and self.language not in (*CORPUS_LANGUAGES, AUTO_LANGUAGE):
            raise ValueError(f"language {self.language!r} is not one kbsim knows; expected one of "
                             f"{', '.join(CORPUS_LANGUAGES)}, or {AUTO_LANGUAGE!r}")
        if self.analyzer == "ascii" and self.language is not None:
            raise ValueError(f"the ascii analyzer has no language (language {self.language!r}); use "
                             "analyzer: unicode, or leave the analyzer out")
        if self.source is not None and synthetic:
            raise ValueError(
                f"{', '.join(synthetic)} shape the synthetic corpus and do not apply to source "
                f"{self.source!r}; remove them"
            )
        if self.source is not None and not self.source.strip():
            raise ValueError("source is empty; give a folder or file path, or 'kbsim:sample'")
        return self


class SaveMix(_Frozen):
    """Shares of people's saves by kind; they must sum to 1."""

    content: float = Field(0.85, ge=0, le=1)
    content_and_title: float = Field(0.10, ge=0, le=1)
    unpublish: float = Field(0.05, ge=0, le=1)

    @model_validator(mode="after")
    def _sums_to_one(self) -> SaveMix:
        total = self.content + self.content_and_title + self.unpublish
        if not math.isclose(total, 1.0, abs_tol=1e-9):
            raise ValueError(f"save mix shares must sum to 1, got {total:g}")
        return self


class SaveParams(_Frozen):
    """People editing the knowledge base."""

    _OMITTED_WHEN_NONE = ("trace",)

    count: int = Field(300, ge=0, description="saves by people in the day")
    popularity: Literal["zipf", "uniform"] = Field(
        "zipf",
        description="'zipf': the questions' popularity; 'uniform' spreads saves evenly over articles "
        "(the control)",
    )
    mix: SaveMix = SaveMix()
    rank_correlation: float = Field(
        1.0,
        ge=0,
        le=1,
        description="Zipf saves only: how closely the save ranking follows the question ranking "
        "(a Gaussian copula of the two): 1 = the same ranking, 0 = independent",
    )
    replace_unpublished: bool = Field(
        False,
        description="a steady-state knowledge base: each article people unpublish is replaced at once "
        "by a new article that takes its popularity",
    )
    trace: str | None = Field(
        None,
        description="replay people's saves from this CSV (time, article, kind[, title, content, length]) "
        "instead of drawing them; count and arrivals then do not apply",
    )

    @model_validator(mode="after")
    def _correlation_needs_zipf(self) -> SaveParams:
        if self.popularity == "uniform" and self.rank_correlation != 1.0:
            raise ValueError("rank_correlation applies to Zipf saves; uniform saves have no ranking")
        if self.trace is not None and self.replace_unpublished:
            raise ValueError(
                "replace_unpublished does not apply to a replayed saves trace: a trace names only the "
                "articles the day starts with"
            )
        return self


class QuestionParams(_Frozen):
    """People asking; the agent answers each with cited articles."""

    _OMITTED_WHEN_NONE = ("trace",)

    count: int = Field(120, ge=0, description="questions in the day")
    query_words: int = Field(3, ge=1, le=12, description="title words used as the query")
    citations_per_answer: int = Field(2, ge=1, le=20, description="top hits read and cited")
    search_limit: int = Field(10, ge=1, le=20)
    trace: str | None = Field(
        None,
        description="replay questions from this CSV (time, and article or query) instead of drawing them",
    )


#: The most hits the title check may ask a search for (the search tool's own maximum ``limit``).
MAX_TITLE_SEARCH_LIMIT = 20


def _tuple(value: Any) -> Any:
    """A list (as YAML and JSON write one) as a tuple, for a frozen field; anything else as it is."""
    return tuple(value) if isinstance(value, list) else value


#: A strategy's name: a word (a module of kbsim.sim.strategies) or an import path
#: ``package.module:attribute`` of a Strategy of one's own.
STRATEGY_NAME = r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*(:[A-Za-z_][A-Za-z0-9_]*)?$"


class CheckParams(_Frozen):
    """The agent re-checking every citation it has given."""

    _OMITTED_WHEN_NONE = ("strategies",)

    interval_s: Seconds = Field(3600.0, gt=0, description="time between checks")
    poll_page_size: int = Field(100, ge=1, le=100)
    title_search_limit: int = Field(10, ge=1, le=MAX_TITLE_SEARCH_LIMIT)
    strategies: Annotated[tuple[Annotated[str, Field(pattern=STRATEGY_NAME)], ...], BeforeValidator(_tuple)] | None = (
        Field(
            None,
            min_length=1,
            description="the check strategies run at every check, in this order: the names of built-in ones "
            "(modules of kbsim.sim.strategies) or import paths of your own (mypkg.mod:my_strategy, importable "
            "where the day runs); None: the study's three (kbsim.sim.strategies.DEFAULT)",
        )
    )


class EditParams(_Frozen):
    """The edit experiment: edit the first cited article some time after answering.

    ``delay_s`` is ``None`` for a day without edits; otherwise it is the fixed
    delay, the mean (exponential) or the median (lognormal). ``compare_and_swap`` and
    ``idempotency_key`` are the write-up's fourth piece of advice, each a switch
    (issue 27; off: the harm it prevents, measured).
    """

    _OMITTED_WHEN_DEFAULT = ("compare_and_swap", "idempotency_key")

    share: float = Field(0.25, ge=0, le=1, description="share of answers followed by an edit")
    delay_s: Seconds | None = Field(None, ge=0)
    delay_distribution: Literal["fixed", "exponential", "lognormal"] = "fixed"
    lognormal_sigma: float = Field(1.0, gt=0, description="spread of the lognormal delay")
    max_retries: int = Field(1, ge=0, le=10, description="re-read-and-retry rounds after a conflict")
    retry_waits_approval: bool = Field(
        True, description="a retry waits a fresh approval delay, as every write call does"
    )
    exact_share: bool = Field(
        False,
        description="edit exactly the share of answers (every fourth for 0.25) instead of each with "
        "that probability",
    )
    compare_and_swap: bool = Field(
        True,
        description="edits carry the cited version as expected_version and the store refuses a stale one; "
        "false: blind overwrites (the edit replaces whatever is current)",
    )
    idempotency_key: bool = Field(
        True,
        description="a retry after a lost reply resends the same idempotency key (a replay); false: each "
        "request carries a fresh key, so a retry after a lost reply writes again",
    )

    @property
    def enabled(self) -> bool:
        """Whether the agent edits at all: a delay is set and a share of answers edit."""
        return self.delay_s is not None and self.share > 0


class TransportParams(_Frozen):
    """The wire between the agent and the store: each tool call's request, or its reply
    (after the store applied it), is lost with probability ``loss_rate``; the agent waits
    ``timeout_s``, then retries after a backoff doubling from ``backoff_s``."""

    loss_rate: float = Field(0.0, ge=0, le=0.5, description="probability of each of the two losses per call "
                             f"(at most {MAX_LOSS_RATE})")
    timeout_s: Seconds = Field(30.0, gt=0, description="how long the agent waits for a reply before retrying")
    backoff_s: Seconds = Field(1.0, ge=0, description="the first retry's backoff; each further one doubles")
    max_retries: int = Field(
        3, ge=0, le=20,
        description="retries of an edit after its first try (read-only tools are retried until answered)",
    )

    @field_validator("loss_rate")
    @classmethod
    def _finishes(cls, value: float) -> float:
        # pydantic's own bound (le=0.5) speaks first for larger values; just below one half a
        # reply arrives so rarely that a read-only call's retries never end
        if MAX_LOSS_RATE < value <= 0.5:
            chance = 1 - 2 * value
            how = "never gets its reply" if chance <= 0 else f"gets its reply once in {1 / chance:,.0f} sends"
            raise ValueError(
                f"at {value:g} a send {how}: the agent's retries would not end and the day cannot finish; "
                f"expected at most {MAX_LOSS_RATE}")
        return value


class CitationParams(_Frozen):
    """What a citation carries (the write-up's first piece of advice)."""

    carries_version: bool = Field(
        True,
        description="the citation carries updated_at; false: only the id, so a check must compare the "
        "whole re-read text with the text cited",
    )
    edit_without_version: Literal["cited_version", "overwrite", "reread"] = Field(
        "cited_version",
        description="without a version in the citation, how the agent edits (issue 37): 'overwrite' writes "
        "its change over whatever is current; 'reread' reads the article again just before the edit call and "
        "writes over whatever is current when the approved call lands; 'cited_version' (the behaviour before "
        "issue 37) still sends the version it read as expected_version",
    )

    @model_validator(mode="after")
    def _needs_no_version(self) -> CitationParams:
        if self.carries_version and self.edit_without_version != "cited_version":
            raise ValueError("edit_without_version applies to citations without a version "
                             "(citation.carries_version: false)")
        return self


class EventParams(_Frozen):
    """What the knowledge base's event log records (the third piece of advice)."""

    log_unpublish: bool = Field(
        True, description="an unpublish writes an event; false: the article just stops being readable"
    )


class DraftParams(_Frozen):
    """People's drafts (the third piece of advice, its first half: answer only from published
    content; issue 37). A share of people's content saves is written first as a draft and
    published ``lead_s`` later (dropped if the article is unpublished meanwhile)."""

    share: float = Field(0.0, ge=0, le=1, description="share of people's content saves drafted before publishing")
    lead_s: Seconds = Field(1800.0, gt=0, description="how long a draft waits before its author publishes it")
    answer_from_drafts: bool = Field(
        False, description="the agent reads a pending draft in place of the published text (answers from drafts)"
    )

    @model_validator(mode="after")
    def _drafts_to_read(self) -> DraftParams:
        if self.answer_from_drafts and self.share == 0:
            raise ValueError("answer_from_drafts needs drafts: set drafts.share above 0")
        return self


class ReviewParams(_Frozen):
    """What approving each write call is worth (the fifth piece of advice; issue 37): a share
    of the agent's edits is wrong, and a person approving each call catches a share of those
    (refused, never sent). With a session-wide permission no one sees the call, so every wrong
    edit is sent. The approval's delay is ``edit.delay_s``."""

    wrong_share: float = Field(0.0, ge=0, le=1, description="share of the agent's edits that are wrong")
    catch_share: float = Field(0.8, ge=0, le=1, description="share of wrong edits a per-call reviewer refuses")
    per_call: bool = Field(True, description="a person approves each write call; false: a session-wide permission")


class AgentParams(_Frozen):
    """How many agents share the knowledge base with the people (kbsim.sim.world.Agents)."""

    count: int = Field(
        1, ge=1, le=50,
        description="agents; the day's questions are dealt to them in turn (question i to agent i mod N), "
        "each with its own client, citations, cursor, checks and edits",
    )


#: ``store.backend`` naming a live MCP server (``store.server`` says where): the runner hands
#: the day a :class:`kbsim.drive.RemoteBackend`, as ``kbsim drive`` does.
SERVER_STORE_BACKEND = "server"


class ServerParams(_Frozen):
    """A live knowledge-base MCP server a day runs against (``store.backend: server``).

    Give ``url`` (Streamable HTTP) or ``command`` (stdio; a fresh server for each day). In
    ``command``, ``{seed}`` is replaced by the day's seed and ``{day_config}`` by the path of
    a YAML file holding the day's parameters, so ``kbsim serve --corpus synthetic --seed {seed}
    --config {day_config}`` serves exactly the knowledge base the day starts from. Against a
    ``url``, every day starts from whatever the server holds then: use it for one day, on a
    staging copy. The driver checks a sample of the articles against the day's before the day
    starts. A server's tables are measured, not simulated: they are not reproducible bit for bit.
    """

    _OMITTED_WHEN_NONE = ("url", "command", "speed")

    url: str | None = Field(None, pattern=r"^https?://", description="a Streamable HTTP MCP endpoint")
    command: Annotated[tuple[str, ...], BeforeValidator(_tuple)] | None = Field(
        None, min_length=1, description="a command serving MCP over stdio, with {seed} and {day_config} filled in"
    )
    header_env: Annotated[tuple[str, ...], BeforeValidator(_tuple)] = Field(
        (), description="HTTP headers as NAME=ENV_VAR: the value is read from the variable, never stored"
    )
    kb_id: str = Field("kb-1", min_length=1, description="the knowledge base the day reads and edits")
    speed: float | None = Field(
        None, gt=0, description="run the day's clock at this many times real time; unset: as fast as the server answers"
    )
    timeout_s: float = Field(30.0, gt=0, description="seconds a call may take before the day stops")

    @model_validator(mode="after")
    def _one_address(self) -> ServerParams:
        if (self.url is None) == (self.command is None):
            raise ValueError("give exactly one of url (Streamable HTTP) and command (stdio)")
        return self


class StoreParams(_Frozen):
    """The store backend the day's knowledge base lives in.

    Every backend of kbsim's own behaves identically (``tests/test_store_conformance.py``),
    so the choice changes how fast a day runs, never its tables. ``server`` is the exception:
    the day runs against a live MCP server, and its tables are what that server did.
    """

    _OMITTED_WHEN_NONE = ("server",)

    backend: str = Field(
        DEFAULT_STORE_BACKEND,
        pattern=r"^[a-z][a-z0-9_-]*$",
        description="a name in kbsim.store.STORE_BACKENDS (the config loader checks it): 'memory', the "
        "default, is the in-memory store; 'sqlite' a SQLiteStore in a private in-memory database; "
        "'server' a live MCP server, at store.server",
    )
    server: ServerParams | None = Field(None, description="where the server is, for backend 'server'")

    @model_validator(mode="after")
    def _server_named(self) -> StoreParams:
        if (self.backend == SERVER_STORE_BACKEND) != (self.server is not None):
            raise ValueError("store.backend 'server' and store.server go together: give both, or neither")
        return self


class DayParams(_Frozen):
    """One simulated day (defaults: the reference study's Zipf day, no edits)."""

    _OMITTED_WHEN_NONE = ("day_start",)
    _OMITTED_WHEN_DEFAULT = ("store", "transport", "citation", "events", "agents", "drafts", "review")

    day_hours: float = Field(8.0, gt=0)
    zipf_s: float = Field(0.9, ge=0, le=5, description="Zipf exponent of article popularity")
    ranking: Literal["shuffled", "by_id"] = Field(
        "shuffled",
        description="popularity ranks: a seeded shuffle of the articles, or their publication order "
        "(the first article the most popular)",
    )
    arrivals: Literal["uniform", "poisson"] = Field(
        "uniform",
        description="'uniform': exactly `count` arrivals at uniform times; 'poisson': a Poisson number of them",
    )
    event_retention_s: Seconds | None = Field(None, gt=0, description="None keeps every event")
    corpus: CorpusParams = CorpusParams()
    saves: SaveParams = SaveParams()
    questions: QuestionParams = QuestionParams()
    checks: CheckParams = CheckParams()
    edit: EditParams = EditParams()
    store: StoreParams = StoreParams()
    transport: TransportParams = TransportParams()
    citation: CitationParams = CitationParams()
    events: EventParams = EventParams()
    agents: AgentParams = AgentParams()
    drafts: DraftParams = DraftParams()
    review: ReviewParams = ReviewParams()
    day_start: str | None = Field(
        None,
        description="the instant (ISO 8601 with a time zone) that ISO times in traces count from; "
        "None: 2026-01-05T09:00:00Z, the instant simulated time 0 stands for",
    )

    @field_validator("day_start")
    @classmethod
    def _instant(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                instant = datetime.fromisoformat(value)
            except ValueError:
                raise ValueError(f"expected an ISO 8601 date and time, got {value!r}") from None
            if instant.tzinfo is None:
                raise ValueError(f"{value!r} has no time zone; add Z or an offset such as +01:00")
        return value

    @property
    def day_s(self) -> float:
        """The day's length in seconds."""
        return self.day_hours * 3600.0

    @property
    def uses_design_switches(self) -> bool:
        """Whether any of issue 27's switches is away from today's behaviour (then the day's
        agents act behind their wires, :class:`kbsim.sim.world.Agents`, and it writes the
        extra tables of :data:`kbsim.sim.tables.SWITCHED_TABLES`)."""
        edit = self.edit
        return not (edit.compare_and_swap and edit.idempotency_key and self.transport.loss_rate == 0
                    and self.citation.carries_version and self.events.log_unpublish and self.agents.count == 1
                    and self.drafts.share == 0 and self.review.wrong_share == 0)

    def sized_to(self, articles: int) -> DayParams:
        """This day with its counts of saves and questions set for a corpus of ``articles``:
        on a corpus from files, a count not given (nor replaced by a trace) is the reference
        day's rate per article (:data:`SAVES_PER_ARTICLE`, :data:`QUESTIONS_PER_ARTICLE`),
        rounded half up; the synthetic corpus and given counts are left as they are. The
        counts are then given, so a day sized once is not sized again.
        """
        if self.corpus.source is None:
            return self
        update = {}
        for name, group, rate in (("saves", self.saves, SAVES_PER_ARTICLE),
                                  ("questions", self.questions, QUESTIONS_PER_ARTICLE)):
            if "count" not in group.model_fields_set and group.trace is None:
                update[name] = group.model_copy(update={"count": math.floor(rate * articles + 0.5)})
        return self.model_copy(update=update) if update else self


def _holds_seconds(annotation: Any) -> bool:
    """Whether a field's annotation is :data:`Seconds` (or ``Seconds | None``)."""
    if annotation is Seconds:
        return True
    return any(_holds_seconds(arg) for arg in typing.get_args(annotation) if arg is not type(None))


def _duration_fields(model: type[BaseModel], prefix: str = "") -> tuple[str, ...]:
    found: list[str] = []
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            found += _duration_fields(annotation, f"{prefix}{name}.")
        elif _holds_seconds(annotation) or any(
            isinstance(m, BeforeValidator) and m.func is _seconds for m in field.metadata
        ):
            found.append(prefix + name)
    return tuple(found)


#: The day's durations, by dotted name: each takes a number of seconds or text with a unit.
DURATION_FIELDS: tuple[str, ...] = _duration_fields(DayParams)


def in_seconds(dotted: str, value: Any) -> Any:
    """``value`` of the parameter ``dotted`` in its canonical form: a duration written with a
    unit (``"10min"``) as its number of seconds (600.0); any other value as it is.

    Raises:
        ValueError: ``dotted`` is a duration and ``value`` text that is not one.
    """
    return _seconds(value) if dotted in DURATION_FIELDS else value


def nested_in_seconds(nested: dict, prefix: str = "") -> dict:
    """A copy of nested day parameters (``{"edit": {"delay_s": "10min"}}``) with every duration
    written with a unit as its number of seconds: the form a config's canonical dump, its
    contrasts and its sweep values are compared and stored in."""
    out = {}
    for key, value in nested.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict):
            out[key] = nested_in_seconds(value, f"{dotted}.")
        else:
            out[key] = in_seconds(dotted, value)
    return out

