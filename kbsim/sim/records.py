"""What the processes append while a day runs: plain frozen records.

Each list becomes one tidy table (one column per field) in
:func:`kbsim.sim.tables.tabulate`; nothing here knows about SimPy or pandas.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import NamedTuple


class TraceEntry(NamedTuple):
    """One step of a process, for trace tests: who did what, when."""

    actor: str
    time_s: float
    what: str


@dataclass(frozen=True, slots=True)
class SaveRecord:
    """One save of an article, by a person or by the agent."""

    time_s: float
    actor: str  # "people" | "agent"
    kind: str  # "content" | "content_and_title" | "unpublish" | "agent_edit" | "publish"
    article_id: str
    version: str  # the updated_at the save produced
    popularity_rank: int  # the article's rank in question popularity when saved (0 = most popular)


@dataclass(frozen=True, slots=True)
class CitationRecord:
    """One citation the agent gave in an answer."""

    answer_id: int
    position: int  # 0 = top hit
    asked_s: float
    target_article_id: str  # the article the question was about ("" when the question named none)
    article_id: str
    popularity_rank: int  # the cited article's rank in question popularity, 0 = most popular
    cited_version: str
    cited_title: str
    target_rank: int  # the target's rank in question popularity (-1 when there is none)


@dataclass(frozen=True, slots=True)
class CheckRecord:
    """One check of every citation held, by one strategy."""

    check_index: int
    time_s: float
    strategy: str  # the name of one of the day's strategies (kbsim.sim.strategies)
    calls: int
    bytes: int
    citations_held: int
    flagged: int
    flagged_gone: int
    flagged_changed: int
    true_stale: int
    true_gone: int
    true_changed: int
    true_positives: int
    cursor_expired: bool


@dataclass(frozen=True, slots=True)
class EditRecord:
    """One edit attempt of the edit experiment (first try, retry and replay)."""

    answer_id: int
    article_id: str
    asked_s: float
    delay_s: float
    edit_s: float
    outcome: str  # "applied" | "conflict" | "gone"
    retries: int
    retry_outcome: str  # "none" | "applied" | "conflict" | "gone"
    replay_ok: bool | None  # None when nothing was applied
    people_saves_between: int


@dataclass(frozen=True, slots=True)
class DetectionRecord:
    """When one strategy first flagged one citation, and whether the day's last check did.

    One per citation and strategy (tabulated from :attr:`DayLog.first_flags`, not appended
    while the day runs). ``first_flagged_s`` is NaN for a citation the strategy never
    flagged: censored at the last check, not detected at zero.
    """

    answer_id: int
    position: int
    strategy: str
    first_flagged_s: float
    first_label: str  # "gone" | "changed" | "" (never flagged)
    flagged_at_last_check: bool
    last_check_s: float


@dataclass(frozen=True, slots=True)
class IntentRecord:
    """One edit an agent meant to make on a day with the design switches, and what became
    of it (the ``intents`` table)."""

    answer_id: int
    agent: int
    article_id: str
    delay_s: float
    outcome: str  # the first try: "applied" | "conflict" | "gone" | "lost" (no reply after every retry)
    applications: int  # times the store applied this edit (more than 1: a duplicate write)
    people_overwritten: int  # people's saves this edit's writes silently replaced (lost updates)
    agents_overwritten: int  # other agents' writes it replaced
    conflicts_people: int  # conflicts whose newer version a person wrote
    conflicts_agents: int  # ... another agent wrote
    conflicts_self: int  # ... this very edit wrote (a resend with a fresh key)
    sends: int  # edit requests sent, resends included
    lost: int  # sends whose request or reply was lost


@dataclass(frozen=True, slots=True)
class AgentCheckRecord:
    """One agent's own check of its own citations, by one exact strategy (the
    ``agent_checks`` table, on a day of several agents)."""

    agent: int
    check_index: int
    time_s: float
    strategy: str
    calls: int
    bytes: int
    citations_held: int
    flagged: int
    true_stale: int


@dataclass(frozen=True, slots=True)
class TextCheckRecord:
    """A check without versions, by one exact strategy: what comparing text found against the
    versions' truth (the ``text_checks`` table)."""

    check_index: int
    time_s: float
    strategy: str
    true_stale: int
    flagged: int
    missed_restored: int  # stale by version, but the text is the cited text again
    kept_bytes: int  # cited text the agent must keep to compare with


@dataclass(frozen=True, slots=True)
class DraftCitationRecord:
    """A citation of a pending draft: text no person had published when the agent cited it
    (the ``draft_citations`` table, on a day whose agent answers from drafts; issue 37)."""

    answer_id: int
    position: int
    article_id: str
    asked_s: float
    drafted_s: float  # when the person wrote the draft the agent read


@dataclass(frozen=True, slots=True)
class ReviewRecord:
    """One agent edit under the approval model (the ``reviews`` table; issue 37): whether it
    was wrong, whether a per-call reviewer refused it, and whether a wrong one landed."""

    answer_id: int
    agent: int
    wrong: bool
    refused: bool  # a per-call reviewer caught it: never sent
    landed: bool  # the store applied it (at least once)


@dataclass
class DayLog:
    """Everything a day appends; turned into tables once, at the end."""

    saves: list[SaveRecord] = field(default_factory=list)
    citations: list[CitationRecord] = field(default_factory=list)
    checks: list[CheckRecord] = field(default_factory=list)
    edits: list[EditRecord] = field(default_factory=list)
    # a day with the design switches also keeps these (kbsim.sim.tables.SWITCHED_TABLES)
    intents: list[IntentRecord] = field(default_factory=list)
    agent_checks: list[AgentCheckRecord] = field(default_factory=list)
    text_checks: list[TextCheckRecord] = field(default_factory=list)
    draft_citations: list[DraftCitationRecord] = field(default_factory=list)
    reviews: list[ReviewRecord] = field(default_factory=list)
    transport: list = field(default_factory=list)  # kbsim.sim.transport.TransportRecord, once the day is run
    trace: list[TraceEntry] | None = None
    # kept only when asked (to export the day as trace files): each people's save's
    # (new title or None, new content or None), and each question's (time, article, query)
    save_texts: list[tuple[str | None, str | None]] | None = None
    questions: list[tuple[float, str | None, str]] | None = None
    # article id -> times of people's saves, for counting saves between a read and an edit
    people_save_times: dict[str, list[float]] = field(default_factory=dict)
    # strategy -> citation index -> (time of the first check that flagged it, "gone"/"changed")
    first_flags: dict[str, dict[int, tuple[float, str]]] = field(default_factory=dict)
    # strategy -> what the latest check flagged (citation index -> "gone"/"changed"), and its time
    last_flags: dict[str, dict[int, str]] = field(default_factory=dict)
    last_check_s: float | None = None

    def add_save(self, save: SaveRecord) -> None:
        """Record a save, and keep people's save times by article for :meth:`people_saves_between`."""
        self.saves.append(save)
        if save.actor == "people":
            self.people_save_times.setdefault(save.article_id, []).append(save.time_s)

    def people_saves_between(self, article_id: str, after_s: float, until_s: float) -> int:
        """People's saves of an article in ``(after_s, until_s]``."""
        times = self.people_save_times.get(article_id, ())
        return bisect_right(times, until_s) - bisect_right(times, after_s)

    def note_flags(self, strategy: str, time_s: float, flagged: dict[int, str]) -> None:
        """What one strategy flagged at the check at ``time_s`` (citation index -> label)."""
        first = self.first_flags.setdefault(strategy, {})
        for index, label in flagged.items():
            if index not in first:
                first[index] = (time_s, label)
        self.last_flags[strategy] = flagged
        self.last_check_s = time_s

    def note(self, actor: str, time_s: float, what: str) -> None:
        """Append a trace entry when tracing is on (a no-op otherwise)."""
        if self.trace is not None:
            self.trace.append(TraceEntry(actor, time_s, what))
