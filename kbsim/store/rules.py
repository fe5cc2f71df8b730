"""The rules both store backends share: argument checks, errors, ids, result shapes.

A backend (:class:`~kbsim.store.memory.MemoryStore`,
:class:`~kbsim.store.sqlite.SQLiteStore`, or any class that satisfies
:class:`~kbsim.store.protocol.Store`) implements storage; everything that
must read the same on every backend lives here, once:

- every public store method checks its arguments with these before it reads
  or changes anything, so a value of the wrong type, or a time no
  ``updated_at`` can write, is a ``ToolError("invalid_argument")`` naming the
  argument, never a ``TypeError`` from deep inside and never a half-applied
  change (the tool calls' own arguments are checked earlier, against
  ``tools.json``, by :func:`~kbsim.store.schema.validate_arguments`);
- the errors each refusal raises, with their messages (a caller's text in them cut
  short past :data:`~kbsim.store.errors.MAX_ECHOED_CHARS`, :func:`echoed`);
- article ids, idempotency digests, and the exact shapes of search hits,
  reads and citations, and their size in JSON bytes;
- the limits on what an article holds (:data:`MAX_TITLE_CHARS`,
  :data:`MAX_CONTENT_CHARS`), the one place they are set: the edit tool refuses
  an edit over them, and the corpus and trace readers refuse files over them.
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from kbsim.store.errors import ToolError, cut_short, echoed, shown
from kbsim.store.schema import tool_definitions
from kbsim.store.timefmt import (
    MAX_VERSION_US,
    MIN_VERSION_US,
    format_version,
    in_version_range,
    parse_version,
    version_precision_us,
)


def check_text(value: Any, name: str) -> str:
    """A string argument (an id, a title, a content, a query)."""
    if not isinstance(value, str):
        raise ToolError("invalid_argument", f"{name} must be a string, got {shown(value)}")
    return value


def check_texts(values: Any, name: str) -> list[str]:
    """A list (or tuple) of strings (a batch of queries, of article ids), as a new list."""
    if not isinstance(values, (list, tuple)):
        raise ToolError("invalid_argument", f"{name} must be a list of strings, got {shown(values)}")
    if set(map(type, values)) <= {str}:  # plain strings, all (a check's thousands, at one pass)
        return list(values)
    for i, value in enumerate(values):
        check_text(value, f"{name}[{i}]")
    return list(values)


def check_optional_text(value: Any, name: str) -> str | None:
    """``value`` checked as :func:`check_text`, or None."""
    return None if value is None else check_text(value, name)


def check_count(value: Any, name: str, minimum: int) -> int:
    """An integer argument (a limit, a cursor) of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ToolError("invalid_argument", f"{name} must be an integer, got {shown(value)}")
    if value < minimum:
        raise ToolError("invalid_argument", f"{name} must be at least {minimum}, got {value}")
    return int(value)


def check_at(value: Any, name: str = "at") -> int:
    """Simulated seconds -> microseconds, refusing what no ``updated_at`` can write."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ToolError(
            "invalid_argument", f"{name} must be a number of seconds, got {shown(value)}"
        )
    if not math.isfinite(value):
        raise ToolError("invalid_argument", f"{name} must be finite, got {value!r}")
    scaled = value * 1_000_000
    at_us = int(round(scaled)) if math.isfinite(scaled) else None  # 1e303 s overflows to inf
    if at_us is None or not in_version_range(at_us):
        raise ToolError(
            "invalid_argument",
            f"{name} = {value!r} s is outside the times an updated_at can write "
            f"({format_version(MIN_VERSION_US)} to {format_version(MAX_VERSION_US)})",
        )
    return at_us


def check_now_us(value: Any, name: str = "now_us") -> int:
    """Integer microseconds since the day start, within the writable range."""
    check_count(value, name, MIN_VERSION_US)
    if value > MAX_VERSION_US:
        raise ToolError(
            "invalid_argument",
            f"{name} = {value} is after the last time an updated_at can write "
            f"({format_version(MAX_VERSION_US)})",
        )
    return int(value)


def check_next_version(version_us: int, article_id: str) -> int:
    """The version a change would give: refused past the last writable instant."""
    if version_us > MAX_VERSION_US:
        raise ToolError(
            "invalid_argument",
            f"article {article_id!r} is at the last version an updated_at can write "
            f"({format_version(MAX_VERSION_US)}); it cannot change again",
        )
    return version_us


def checked_articles(articles: Any) -> Iterator[tuple[str, str]]:
    """The ``(title, content)`` pairs of a fill, each checked as it is reached."""
    if isinstance(articles, (str, bytes)) or not isinstance(articles, Iterable):
        raise ToolError(
            "invalid_argument",
            f"articles must be an iterable of (title, content) pairs, got {shown(articles)}",
        )
    for i, item in enumerate(articles):
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise ToolError(
                "invalid_argument",
                f"articles[{i}] must be a (title, content) pair, got {shown(item)}",
            )
        title, content = item
        yield check_text(title, f"articles[{i}] title"), check_text(content, f"articles[{i}] content")


def check_retention(value: Any) -> float | None:
    """The ``event_retention_s`` option: None, or a finite number of seconds > 0."""
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or not value > 0
    ):
        raise ValueError(
            f"event_retention_s must be a finite number of seconds > 0 or None, got {value!r}"
        )
    return value


# -- what an article holds -----------------------------------------------------------

_QUERY_SCHEMA = tool_definitions()["search_knowledge_base"].input_schema["properties"]["query"]
#: The shortest and longest query ``search_knowledge_base`` takes (tools.json).
QUERY_CHARS: tuple[int, int] = (_QUERY_SCHEMA["minLength"], _QUERY_SCHEMA["maxLength"])
#: The fewest and the most characters of an article's title in a corpus or a trace, and the
#: most an edit may set: the title check searches for the cited title, so a title is a
#: query the search tool takes (tools.json: 2 to 200 characters). An agent's edit may set a
#: shorter title, even "" (tools.json allows it); people's saves in a day never do.
MIN_TITLE_CHARS, MAX_TITLE_CHARS = QUERY_CHARS
#: The most characters of an article's content. tools.json bounds queries but not content;
#: kbsim bounds it, because a read returns the whole content: that is what one read can
#: cost an agent (about 25,000 tokens).
MAX_CONTENT_CHARS = 100_000


def check_edit_limits(arguments: dict[str, Any]) -> None:
    """An edit's ``content`` and ``title`` within :data:`MAX_CONTENT_CHARS` and
    :data:`MAX_TITLE_CHARS` (checked after the schema, before anything is read or written)."""
    content, title = arguments.get("content"), arguments.get("title")
    if isinstance(content, str) and len(content) > MAX_CONTENT_CHARS:
        raise ToolError(
            "invalid_argument",
            f"content of {len(content):,} characters is over the limit of {MAX_CONTENT_CHARS:,} "
            "an article may hold; split it into several articles",
        )
    if isinstance(title, str) and len(title) > MAX_TITLE_CHARS:
        raise ToolError(
            "invalid_argument",
            f"title of {len(title):,} characters is over the limit of {MAX_TITLE_CHARS} (a title "
            f"is searched for as a query, and a query holds at most {MAX_TITLE_CHARS})",
        )


def title_problem(title: str) -> str | None:
    """Why ``title`` cannot be an article's title in a corpus or a trace, or None."""
    if len(title) < MIN_TITLE_CHARS:
        return (f"title {title!r} is shorter than {MIN_TITLE_CHARS} characters (the title check searches "
                f"for it, and a search query needs at least {MIN_TITLE_CHARS})")
    if len(title) > MAX_TITLE_CHARS:
        return (f"title of {len(title):,} characters is over the limit of {MAX_TITLE_CHARS} (the title "
                f"check searches for it, and a search query holds at most {MAX_TITLE_CHARS})")
    return None


# -- ids, refusals and idempotency ------------------------------------------------


def article_id_for(number: int) -> str:
    """The id of the ``number``-th article published in a knowledge base (1-based)."""
    return f"art-{number:06d}"


#: The most characters an article id given by its source may have (it travels in every
#: search hit, read, citation and event).
MAX_ARTICLE_ID_CHARS = 256
#: Unicode categories no article id may hold: control characters, line and paragraph
#: separators, surrogates.
_UNCARRIED = frozenset(("Cc", "Zl", "Zp", "Cs"))


def article_id_problem(article_id: Any) -> str | None:
    """Why ``article_id`` cannot be an article's own id, or None when it can.

    The tools carry an id as a JSON string in every hit, read, citation and event, and an
    agent sends it back as it read it: so an id is a non-empty string of at most
    :data:`MAX_ARTICLE_ID_CHARS` characters, without spaces at either end (a reader trims
    them), and without control characters, line or paragraph separators or lone
    surrogates (a JSON reply as UTF-8 text cannot carry these unchanged).
    """
    if not isinstance(article_id, str):
        return f"an id must be a string, got {shown(article_id)}"
    if not article_id:
        return "the id is empty"
    if len(article_id) > MAX_ARTICLE_ID_CHARS:
        return f"the id has {len(article_id):,} characters, over the limit of {MAX_ARTICLE_ID_CHARS}"
    if article_id != article_id.strip():
        return f"the id {article_id!r} has spaces at its start or end"
    bad = next((char for char in article_id if unicodedata.category(char) in _UNCARRIED), None)
    if bad is not None:
        return (f"the id {cut_short(article_id)} holds the character U+{ord(bad):04X}, which a tool "
                "result cannot carry as it is (control characters, line separators, lone surrogates)")
    return None


def nfc(text: str) -> str:
    """``text`` in Unicode's composed form (NFC): how ids and queries are kept and looked
    up, so that an id sent decomposed (as macOS writes file names) finds its article."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def check_article_ids(article_ids: Any, count: int) -> list[str]:
    """The ids a fill gives its ``count`` articles: one each, distinct (as NFC, :func:`nfc`,
    the form they are kept in), each one an id the tools can carry (:func:`article_id_problem`)."""
    if isinstance(article_ids, (str, bytes)) or not isinstance(article_ids, Iterable):
        raise ToolError("invalid_argument", f"article_ids must be a list of strings, got {shown(article_ids)}")
    ids = list(article_ids)
    if len(ids) != count:
        raise ToolError("invalid_argument", f"article_ids holds {len(ids)} ids for {count} articles")
    seen: set[str] = set()
    for i, article_id in enumerate(ids):
        problem = article_id_problem(article_id)
        if problem is not None:
            raise ToolError("invalid_argument", f"article_ids[{i}]: {problem}")
        article_id = ids[i] = nfc(article_id)
        if article_id in seen:
            raise ToolError("invalid_argument", f"article_ids[{i}]: {article_id!r} is given twice")
        seen.add(article_id)
    return ids


def next_article_id(count: int, taken) -> str:
    """The id of an article published after ``count`` others, without an id of its own:
    ``art-NNNNNN`` numbered ``count + 1``, or the next number not ``taken(id)`` (a
    knowledge base of the source's own ids may hold ``art-000012`` already)."""
    number = count + 1
    while taken(article_id_for(number)):
        number += 1
    return article_id_for(number)


def article_not_found(kb_id: str, article_id: str) -> ToolError:
    """The ``not_found`` refusal of an article missing from (or unpublished in) a knowledge base."""
    return ToolError(
        "not_found", f"article_id {echoed(article_id)} not found in knowledge base {echoed(kb_id)}"
    )


def kb_not_found(kb_id: str) -> ToolError:
    """The ``not_found`` refusal of an unknown knowledge base."""
    return ToolError("not_found", f"knowledge_base_id {echoed(kb_id)} not found")


def arguments_digest(arguments: dict[str, Any]) -> str:
    """SHA-256 (hex) of ``arguments`` as key-sorted, compact, ASCII JSON.

    An idempotency record keeps this instead of the arguments: enough to tell
    a replay from a reused key, at 64 bytes however large the edit was.
    """
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def check_replay(key: str, first_digest: str, arguments: dict[str, Any]) -> None:
    """A repeated idempotency key is a replay only with the very same arguments."""
    if first_digest != arguments_digest(arguments):
        raise ToolError(
            "idempotency_key_reused",
            f"idempotency_key {echoed(key)} was already used with different arguments",
        )


def check_new_kb_id(kb_id: Any) -> str:
    """A new knowledge base's id, checked to be a non-empty string."""
    if not isinstance(kb_id, str) or not kb_id:
        raise ToolError(
            "invalid_argument", f"kb_id must be a non-empty string, got {kb_id!r}"
        )
    return kb_id


def kb_exists(kb_id: str) -> ToolError:
    """The refusal to create a knowledge base whose id is taken."""
    return ToolError("invalid_argument", f"knowledge_base_id {kb_id!r} already exists")


def check_save_changes(content: str | None, title: str | None) -> None:
    """A person's save must change the content, the title or both."""
    if content is None and title is None:
        raise ToolError("invalid_argument", "save_article needs content or title (both are None)")


def check_expected_version(arguments: dict[str, Any], current_us: int) -> None:
    """Compare-and-swap's check, the same on every backend: ``expected_version`` must name
    the article's current version to the microsecond.

    A version sent with fewer fraction digits than it was read with (a JavaScript ``Date``
    keeps milliseconds) that lies within its own precision of the current version is
    refused as ``version_not_exact``, never as a conflict: a re-read would not fix it, the
    client would cut the version again. It is not taken as a match either, because two
    versions of one article can fall within one millisecond, and a match would then let an
    edit overwrite a save its author never read (docs/serve.md, "Versions").

    Raises:
        ToolError: ``version_not_exact``, or ``version_conflict``.
    """
    text = arguments["expected_version"]
    expected = parse_version(text)
    if expected == current_us:
        return
    step = version_precision_us(text)
    if expected is not None and step > 1 and abs(current_us - expected) < step:
        raise ToolError(
            "version_not_exact",
            f"expected_version {echoed(text)} is the current version of article "
            f"{echoed(arguments['article_id'])} cut to fewer than six fraction digits; send "
            "updated_at exactly as read (all its digits), as an opaque string",
        )
    raise version_conflict(arguments)


def version_conflict(arguments: dict[str, Any]) -> ToolError:
    """The ``version_conflict`` refusal of an edit whose ``expected_version`` is not current."""
    return ToolError(
        "version_conflict",
        f"expected_version {echoed(arguments['expected_version'])} is not the current "
        f"version of article {echoed(arguments['article_id'])}; re-read it and retry",
    )


def check_poll_cursor(after_sequence: int, oldest: int, latest: int) -> None:
    """Refuse a cursor beyond the log, or older than the oldest event still kept."""
    if after_sequence > latest:
        raise ToolError(
            "invalid_argument",
            f"after_sequence {after_sequence} is beyond the latest sequence {latest}; "
            "resume from latest_sequence",
            latest_sequence=latest,
        )
    if after_sequence + 1 < oldest:
        raise ToolError(
            "cursor_expired",
            f"after_sequence {after_sequence} is older than the oldest kept event "
            f"{oldest}; re-read and resume from latest_sequence",
            oldest_available_sequence=oldest,
            latest_sequence=latest,
        )


# -- what the tools return -----------------------------------------------------------

#: Characters of an article's content a search hit carries as its snippet.
SNIPPET_CHARS = 160


def json_size(result: Any) -> int:
    """Bytes of ``result`` (a result dict, or any JSON value) as compact UTF-8 JSON: the text an
    agent pays for."""
    text = json.dumps(result, separators=(",", ":"), ensure_ascii=False)
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def json_text_size(value: str) -> int:
    """``json_size(value)`` of one string (its quotes included), without encoding it when
    it needs no escape: printable ASCII with no quote or backslash is its length plus 2."""
    if value.isascii() and value.isprintable() and '"' not in value and "\\" not in value:
        return len(value) + 2
    return json_size(value)


# the JSON of a search hit, a read result and a refusal, less their string values
_HIT_FRAME = len('{"article_id":,"title":,"snippet":,"updated_at":,"citation":'
                 '{"knowledge_base_id":,"article_id":,"updated_at":}}')
_READ_FRAME = len('{"article_id":,"title":,"content":,"updated_at":,"citation":'
                  '{"knowledge_base_id":,"article_id":,"updated_at":}}')
_ERROR_FRAME = len('{"error":{"code":,"message":}}')


class SizedArticle(Protocol):
    """What the JSON sizes read of an article: an :class:`Article`, or one with its content left out."""

    @property
    def article_id(self) -> str:
        """The article's id."""
        ...

    @property
    def title(self) -> str:
        """The article's title."""
        ...

    @property
    def content(self) -> str:
        """The article's content (empty when left out)."""
        ...

    @property
    def updated_at(self) -> str:
        """The version's RFC 3339 time."""
        ...


def hit_json_size(kb_id: str, article: SizedArticle) -> int:
    """``json_size(search_hit(kb_id, article))``, summed from the sizes of its strings.

    Why it exists: every new version of an article is sized once as a hit and once as a
    read (a day's saves, and every article of a starting knowledge base); encoding the
    whole dict was about 10 µs a time. The tests hold both sizes to ``json_size`` on
    arbitrary text.
    """
    ids = json_text_size(article.article_id) + json_text_size(article.updated_at)
    return (_HIT_FRAME + 2 * ids + json_text_size(kb_id) + json_text_size(article.title)
            + json_text_size(article.content[:SNIPPET_CHARS]))


def read_json_size(kb_id: str, article: SizedArticle) -> int:
    """``json_size(read_result(kb_id, article))``, summed as :func:`hit_json_size` is."""
    ids = json_text_size(article.article_id) + json_text_size(article.updated_at)
    return (_READ_FRAME + 2 * ids + json_text_size(kb_id) + json_text_size(article.title)
            + json_text_size(article.content))


def error_json_size(error: ToolError) -> int:
    """``json_size({"error": error.to_dict()})``: what a refused call costs the agent."""
    if error.details:
        return json_size({"error": error.to_dict()})
    return _ERROR_FRAME + json_text_size(error.code) + json_text_size(error.message)


@dataclass(slots=True)
class Article:
    """One article's full state, published or not: what ``article_state`` returns on every
    backend (a copy), and what the in-memory store holds."""

    article_id: str
    title: str
    content: str
    published: bool
    version_us: int
    updated_at: str = ""
    # JSON sizes of this version's search hit and read result, filled on first use
    hit_json_len: int | None = None
    read_json_len: int | None = None

    def __post_init__(self) -> None:
        self.updated_at = format_version(self.version_us)

    def __copy__(self) -> Article:
        """The same shallow copy ``copy.copy`` makes, without its generic reduce protocol
        (the store copies articles for every ``article_state`` and every day's store)."""
        twin = object.__new__(type(self))
        twin.article_id = self.article_id
        twin.title = self.title
        twin.content = self.content
        twin.published = self.published
        twin.version_us = self.version_us
        twin.updated_at = self.updated_at
        twin.hit_json_len = self.hit_json_len
        twin.read_json_len = self.read_json_len
        return twin

    def set_version(self, version_us: int) -> None:
        """Set the article's version (and its ``updated_at``); the cached result sizes no longer hold."""
        self.version_us = version_us
        self.updated_at = format_version(version_us)
        self.hit_json_len = self.read_json_len = None

    def snippet(self) -> str:
        """The content's first :data:`SNIPPET_CHARS` characters: this version's search hit carries them."""
        return self.content[:SNIPPET_CHARS]

    def hit_size(self, kb_id: str) -> int:
        """JSON bytes of this version's search hit, sized once per version."""
        if self.hit_json_len is None:
            self.hit_json_len = hit_json_size(kb_id, self)
        return self.hit_json_len

    def read_size(self, kb_id: str) -> int:
        """JSON bytes of this version's read result, sized once per version."""
        if self.read_json_len is None:
            self.read_json_len = read_json_size(kb_id, self)
        return self.read_json_len


def citation(kb_id: str, article_id: str, updated_at: str) -> dict[str, str]:
    """The citation a tool result carries: knowledge base, article and version."""
    return {"knowledge_base_id": kb_id, "article_id": article_id, "updated_at": updated_at}


def search_hit(kb_id: str, article: Article) -> dict[str, Any]:
    """One ``search_knowledge_base`` result item."""
    return {
        "article_id": article.article_id,
        "title": article.title,
        "snippet": article.snippet(),
        "updated_at": article.updated_at,
        "citation": citation(kb_id, article.article_id, article.updated_at),
    }


def read_result(kb_id: str, article: Article) -> dict[str, Any]:
    """The ``read_knowledge_article`` result."""
    return {
        "article_id": article.article_id,
        "title": article.title,
        "content": article.content,
        "updated_at": article.updated_at,
        "citation": citation(kb_id, article.article_id, article.updated_at),
    }
