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
  kbsim corpus sample my-kb/                # the sample help desk as a folder of Markdown files
  kbsim corpus sample kb.jsonl --format jsonl
"""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "corpus",
        help="check a knowledge base's files, or write out the shipped sample",
        description="Read a corpus (a folder of .md/.txt files, a .jsonl or a .csv file) as a day would "
        "and report it, or write the shipped sample help desk as files you can edit and run on.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = actions.add_parser("check", help="read a corpus and report its articles, or the first bad input")
    check.add_argument("source", metavar="PATH", help="a folder, a .jsonl or .csv file, or kbsim:sample")
    check.set_defaults(error_prefix="kbsim corpus check: ")
    sample = actions.add_parser("sample", help="write the shipped sample help desk (400 articles)")
    sample.add_argument("target", metavar="PATH", help="a new folder (markdown) or file (jsonl, csv)")
    sample.add_argument("--format", choices=("markdown", "jsonl", "csv"), default="markdown",
                        help="default: markdown (one .md file per article)")
    sample.set_defaults(error_prefix="kbsim corpus sample: ")
    parser.set_defaults(func=run)


def run(args) -> int:
    from kbsim.errors import printable
    from kbsim.inputs import load_corpus
    from kbsim.inputs.corpus import write_corpus
    from kbsim.inputs.sample import sample_articles

    if args.action == "sample":
        try:
            written = write_corpus(iter(sample_articles()), args.target, args.format)
        except (FileExistsError, OSError) as exc:
            print(f"kbsim corpus sample: {exc}", file=sys.stderr)
            return 2
        print(f"wrote the sample's {len(sample_articles())} articles to {written}")
        return 0
    corpus = load_corpus(args.source)
    chars = sum(len(content) for content in corpus.contents)
    popularity = "popularity weights given" if corpus.weights is not None else "no popularity (a seeded Zipf ranking)"
    # titles, ids and paths are the files' text: printed with control characters escaped
    print(printable(f"{corpus.source}: {len(corpus):,} articles, {chars:,} characters of content, {popularity}; "
                    f"sha256 {corpus.digest[:16]}"))
    print(f"kbsim ids art-000001 to art-{len(corpus):06d}, in this order:")
    for number, title in enumerate(corpus.titles[:5], start=1):
        own = f" ({corpus.ids[number - 1]})" if corpus.ids else ""
        print(printable(f"  art-{number:06d}{own}: {title}"))
    if len(corpus) > 5:
        print(f"  ... and {len(corpus) - 5:,} more")
    return 0
