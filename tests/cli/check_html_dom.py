#!/usr/bin/env python3
"""Checks that the DOM Chromium rendered from `ntprofctl report --html` holds the numbers of the
JSON report of the same recordings: per group end-to-end p50/p99 and each stage's n, mean, p50,
p99 as the page prints them (%.2f us), and the slowest commands in order.

usage: check_html_dom.py REPORT.json DOM.html"""
import json
import sys
from html.parser import HTMLParser


class Page(HTMLParser):
    """Collects per group: the latency line's values and each table row's data-k cells."""

    def __init__(self):
        super().__init__()
        self.groups = {}      # name -> {"latency": {k: text}, "rows": {stage: {k: text}}}
        self.slowest = []     # [{k: text}] in page order
        self.group = None
        self.row = None
        self.in_slowest = False
        self.key = None
        self.text = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section" and "data-group" in a:
            self.group = self.groups.setdefault(a["data-group"], {"latency": {}, "rows": {}})
        if tag == "section" and a.get("id") == "slowest":
            self.group, self.in_slowest = None, True
        if tag == "tr" and self.group is not None and "data-stage" in a:
            self.row = self.group["rows"].setdefault(a["data-stage"], {})
        if tag == "tr" and self.in_slowest:
            self.row = {}
            self.slowest.append(self.row)
        if "data-k" in a:
            self.key, self.text = a["data-k"], ""

    def handle_data(self, data):
        if self.key is not None:
            self.text += data

    def handle_endtag(self, tag):
        if self.key is not None and tag in ("td", "b"):
            if tag == "b" and self.group is not None:
                self.group["latency"][self.key] = self.text.strip()
            elif self.row is not None:
                self.row[self.key] = self.text.strip()
            self.key = None
        if tag == "tr":
            self.row = None
        if tag == "section":
            self.group, self.in_slowest = None, False


def us(v):
    return "%.2f" % v


def main():
    report = json.load(open(sys.argv[1]))
    page = Page()
    page.feed(open(sys.argv[2], encoding="utf-8").read())
    failures = []

    def expect(what, shown, wanted):
        if shown != wanted:
            failures.append(f"{what}: page shows {shown!r}, JSON says {wanted!r}")

    checked = 0
    if not report["groups"]:
        failures.append("the JSON report has no groups to check")
    for g in report["groups"]:
        name = g["name"]
        shown = page.groups.get(name)
        if shown is None:
            failures.append(f"group {name!r} is not on the page")
            continue
        for k in ("p50", "p99"):
            expect(f"{name} end-to-end {k}", shown["latency"].get(k), us(g["latency"][k + "_us"]))
            checked += 1
        for s in g["stages"]:
            row = shown["rows"].get(s["id"], {})
            for k in ("mean", "p50", "p99"):
                expect(f"{name} {s['id']} {k}", row.get(k), us(s[k + "_us"]))
                checked += 1
            expect(f"{name} {s['id']} n", row.get("n"), str(s["n"]))
    by = report.get("slowest_by", "end_to_end")
    if len(page.slowest) - 1 != len(report.get("slowest", [])):  # minus the header row
        failures.append(f"slowest: page lists {len(page.slowest) - 1} commands, JSON "
                        f"{len(report.get('slowest', []))}")
    for i, (row, c) in enumerate(zip(page.slowest[1:], report.get("slowest", []))):
        expect(f"slowest #{i + 1} {by}", row.get(by), us(c["latency_us"]))
        expect(f"slowest #{i + 1} start", row.get("start"), c["start"] or "-")
        expect(f"slowest #{i + 1} cid", row.get("cid"), str(c["cid"]))
        for stage, value in c["stages"].items():
            if stage != by:
                expect(f"slowest #{i + 1} {stage}", row.get(stage), us(value))
        checked += 1
    for f in failures:
        print("FAILED:", f)
    print(f"check_html_dom: {checked} values compared, {len(failures)} differ")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
