"""``kbsim corpus``: check a knowledge base's files, or write out the shipped sample.

Exit codes: 0 done; 2 a bad input (the message names the file, line and field) or a
target that exists.
"""

from __future__ import annotations

import argparse
import sys

EPILOG = """\
examples:
  kbsim corpus check my-kb/                 # read it as a day would, report what was found
  kbsim corpus check my-kb/ --language de   # ... searched with the German analyzer
  kbsim corpus sample my-kb/                # the sample help desk as a folder of Markdown files
  kbsim corpus sample kb.jsonl --format jsonl
  kbsim corpus sample de-kb/ --sample kbsim:sample-de
"""

#: ``corpus check`` warns when the unpublishes a day is expected to make would remove more
#: than this share of the corpus (every citation of an unpublished article is gone).
MAX_UNPUBLISHED_SHARE = 0.05


def register(subparsers) -> None:
    """Add the ``kbsim corpus`` parser to ``subparsers``, handled by :func:`run`."""
    from kbsim.cli import command_help

    parser = subparsers.add_parser(
        "corpus",
        help=command_help("corpus"),
        description="Read a corpus (a folder of .md/.txt files, a .jsonl or a .csv file) as a day would "
        "and report it, or write the shipped sample help desk as files you can edit and run on.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = actions.add_parser("check", help="read a corpus and report its articles, or the first bad input")
    check.add_argument("source", metavar="PATH",
                       help="a folder, a .jsonl or .csv file, or kbsim:sample, kbsim:sample-de, kbsim:sample-hi")
    check.add_argument("--saves", type=int, metavar="N",
                       help="the saves a day makes (saves.count; default: 0.75 per article)")
    check.add_argument("--language", metavar="CODE",
                       help="the corpus's language (en, de, hi, ja, ...; 'und' for none in particular; 'auto': "
                            "from its text, the default), as corpus.language or kbsim serve --language sets it")
    sample = actions.add_parser("sample", help="write a shipped sample help desk (English: 400 articles)")
    sample.add_argument("--sample", default="kbsim:sample",
                        choices=("kbsim:sample", "kbsim:sample-de", "kbsim:sample-hi"),
                        help="which sample (default: kbsim:sample, in English)")
    check.set_defaults(error_prefix="kbsim corpus check: ")
    sample.add_argument("target", metavar="PATH", help="a new folder (markdown) or file (jsonl, csv)")
    sample.add_argument("--format", choices=("markdown", "jsonl", "csv"), default="markdown",
                        help="default: markdown (one .md file per article)")
    sample.set_defaults(error_prefix="kbsim corpus sample: ")
    parser.set_defaults(func=run)


def run(args) -> int:
    """Check a knowledge base's files, or write the shipped sample out; the exit status."""
    from kbsim.errors import first_problem, printable
    from kbsim.files import FileWriteError
    from kbsim.inputs import InputError, load_corpus
    from kbsim.inputs.corpus import write_corpus

    if args.action == "sample":
        sample = load_corpus(args.sample)
        try:
            written = write_corpus(sample.articles(), args.target, args.format, ids=sample.ids)
        except (OSError, FileWriteError) as exc:  # exists already, or cannot be written: one line
            print(f"kbsim corpus sample: {exc}", file=sys.stderr)
            return 2
        language = f" (check or serve it with --language {sample.language})" if sample.language else ""
        print(f"wrote the sample's {len(sample)} articles to {written}{language}")
        return 0
    corpus = load_corpus(args.source)  # an InputError is reported by kbsim.cli.main
    try:
        report = check_report(corpus, args.language, args.saves)
    except InputError:
        raise
    except ValueError as exc:
        print(printable(f"kbsim corpus check: --language {args.language!r}: {first_problem(exc)}"), file=sys.stderr)
        return 2
    print("\n".join(printable(line) for line in report))  # titles and ids are the files' text: escaped
    return 0


def check_report(corpus, language: str | None = None, saves: int | None = None) -> list[str]:
    """What ``kbsim corpus check`` prints: the articles and their ids, the analyzer, the day
    the corpus implies, and warnings (text the analyzer cannot search, shared titles, and
    more articles sharing one than the title check can find, which a day refuses;
    unpublishes that would empty much of it).

    Raises:
        ValueError: ``language`` is not one kbsim knows.
    """
    from kbsim.errors import brief
    from kbsim.inputs import InputError
    from kbsim.inputs.resolve import (
        corpus_analyzer,
        largest_title_group,
        refuse_crowded_titles,
        unsearchable_warnings,
    )
    from kbsim.params import DayParams

    given = {} if saves is None else {"saves": {"count": saves}}
    params = DayParams.model_validate({"corpus": {"source": corpus.source, "language": language}, **given})
    analyzer = corpus_analyzer(params.corpus, corpus)
    day = params.sized_to(len(corpus))
    chars = sum(len(content) for content in corpus.contents)
    popularity = "popularity weights given" if corpus.weights is not None else "no popularity (a seeded Zipf ranking)"
    lines = [f"{corpus.source}: {len(corpus):,} articles, {chars:,} characters of content, {popularity}; "
             f"sha256 {corpus.digest[:16]}"]
    ids = corpus.ids or [f"art-{n:06d}" for n in range(1, len(corpus) + 1)]
    lines.append("article ids: the source's own, in this order:" if corpus.ids
                 else f"article ids: art-000001 to art-{len(corpus):06d} (the source gives none), in this order:")
    lines += [f"  {article_id}: {title}" for article_id, title in zip(ids[:5], corpus.titles[:5], strict=False)]
    if len(corpus) > 5:
        lines.append(f"  ... and {len(corpus) - 5:,} more")
    lines.append(f"analyzer: {analyzer.name} ({_analyzer_words(analyzer)})")
    unpublished = day.saves.count * day.saves.mix.unpublish
    lines.append(
        f"a day on it: {day.saves.count:,} saves and {day.questions.count:,} question"
        f"{'' if day.questions.count == 1 else 's'} in {day.day_hours:g} hours (a count not given is the reference "
        f"day's 0.75 saves or 0.3 questions per article; set saves.count and questions.count to choose), of which "
        f"about {unpublished:,.1f} unpublish an article")
    warnings = []
    if unpublished > MAX_UNPUBLISHED_SHARE * len(corpus):
        warnings.append(
            f"the day's unpublishes ({unpublished:,.1f} expected, {day.saves.mix.unpublish:.0%} of its saves) would "
            f"remove {min(unpublished / len(corpus), 1.0):.1%} of the corpus, more than {MAX_UNPUBLISHED_SHARE:.0%}: "
            "citations of unpublished articles are gone. Lower saves.mix.unpublish, or set "
            "saves.replace_unpublished: true")
    try:
        refuse_crowded_titles(day, corpus)
    except InputError as exc:
        warnings.append(f"a day on it is refused: {exc.problem}")
    else:
        title, count = largest_title_group(corpus, analyzer)
        if count > 1:
            warnings.append(
                f"{count:,} articles share the title {brief(title)} (or its search terms): a question "
                "about one may be answered from another; the title check still tells them apart by id")
    warnings += unsearchable_warnings(corpus, analyzer)
    lines += [f"warning: {warning}" for warning in warnings]
    return lines


def _analyzer_words(analyzer) -> str:
    if analyzer.is_default:
        return "lower-cased runs of ASCII letters and digits"
    words = "NFKC, case folding, Unicode words, bigrams of Chinese, Japanese and Thai"
    if analyzer.name.startswith("auto:"):
        return words + f"; each text in its own language among {analyzer.name.partition(':')[2]}"
    words += f", {analyzer.language} stop words and stemming" if analyzer.language else ""
    return words + (", compound words split" if analyzer.splits_compounds else "")
