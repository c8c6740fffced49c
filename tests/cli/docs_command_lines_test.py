#!/usr/bin/env python3
"""Every ntprofctl command line the docs show parses as ntprofctl parses it, so the docs and the
command line cannot drift apart.

The command lines: those in the fenced code blocks of README.md and docs/*.md (a leading "$ " is
a prompt, a trailing backslash continues the line; synopses with "[--flag]" are not command
lines), and the "Examples:" of every verb's --help. Each is cut at its first shell operator
(|, &&, ;, >) and handed to ntprofctl_parse_check, which parses it with ntprofctl's own
definitions without running it.

usage: docs_command_lines_test.py SOURCE_DIR NTPROFCTL NTPROFCTL_PARSE_CHECK
"""
import json
import pathlib
import re
import shlex
import subprocess
import sys

OPERATORS = {"|", "||", "&&", ";", "&", ">", ">>", "<", "2>", "2>&1"}


def joined_lines(lines):
    """(line number, text) of each logical line: backslash continuations joined."""
    pending, start = "", 0
    for number, text in lines:
        if not pending:
            start = number
        if text.rstrip().endswith("\\"):
            pending += text.rstrip()[:-1] + " "
            continue
        yield start, pending + text
        pending = ""
    if pending:
        yield start, pending


def command_of(text):
    """The ntprofctl argv a shell line runs, or None when it runs no ntprofctl command."""
    text = text.strip()
    if text.startswith("$ "):
        text = text[2:]
    if not text.startswith("ntprofctl ") and text != "ntprofctl":
        return None
    if re.search(r"\[-", text):  # a synopsis: "ntprofctl report FILE... [--detail]"
        return None
    words = shlex.split(text, comments=True)
    for i, word in enumerate(words):
        if word in OPERATORS or word.startswith(">") or word.startswith("2>"):
            return words[:i]
    return words


def doc_commands(source):
    files = [source / "README.md"] + sorted((source / "docs").glob("*.md"))
    for path in files:
        in_block, block = False, []
        for number, text in enumerate(path.read_text().splitlines(), 1):
            if text.lstrip().startswith("```"):
                if in_block:
                    for start, line in joined_lines(block):
                        argv = command_of(line)
                        if argv:
                            yield f"{path.relative_to(source)}:{start}", argv
                in_block, block = not in_block, []
                continue
            if in_block:
                block.append((number, text))


def help_commands(ntprofctl):
    def help_of(*verb):
        return subprocess.run([ntprofctl, *verb, "--help"], capture_output=True, text=True,
                              check=True).stdout

    top = help_of()
    listed = top.split("Subcommands:")[1].split("\n\n")[0]
    verbs = re.findall(r"^  ([a-z]+) ", listed, re.M)
    for verb in verbs:
        lines = help_of(verb).split("Examples:")[1].splitlines()
        for start, line in joined_lines(enumerate(lines, 1)):
            argv = command_of(line)
            if argv:
                yield f"ntprofctl {verb} --help, example line {start}", argv


def main():
    source, ntprofctl, checker = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    commands = list(doc_commands(source)) + list(help_commands(ntprofctl))
    by_source = {}
    for where, _ in commands:
        key = "--help" if where.startswith("ntprofctl ") else where.split(":")[0]
        by_source[key] = by_source.get(key, 0) + 1
    print("command lines per source:", ", ".join(f"{k} {v}" for k, v in sorted(by_source.items())))
    stdin = "".join(json.dumps({"where": where, "argv": argv}) + "\n" for where, argv in commands)
    result = subprocess.run([checker], input=stdin, capture_output=True, text=True)
    print(result.stdout, end="")
    if result.returncode != 0 or result.stderr:
        print(result.stderr, end="")
        return 1
    # The extraction itself must have found the lines the docs are known to show.
    for must in ("README.md", "docs/control-plane.md", "docs/fleet.md", "--help"):
        if by_source.get(must, 0) == 0:
            print(f"FAIL: no ntprofctl command line found in {must}: the extraction is broken")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
